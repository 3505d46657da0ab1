import Foundation
import Moments

/// `JSONFilePersistence` beside `JSONEncoder` + `Data.write(options: .atomic)` (and, for
/// loads, `Data(contentsOf:)` + `JSONDecoder`).
enum JSONFileBenchmark {
    static func run() async throws -> [Row] {
        var rows: [Row] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-bench-json-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let sdk = try JSONFilePersistence(directory: directory.appendingPathComponent("sdk"))
        let rawDirectory = directory.appendingPathComponent("raw")
        try FileManager.default.createDirectory(at: rawDirectory, withIntermediateDirectories: true)
        for count in [100, 10_000] {
            let details = BenchmarkData.timeline(moments: count)
            let rawFile = rawDirectory.appendingPathComponent("0-\(count).json")
            let saves = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { try await sdk.save(details, for: "0"); return 1 } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { try JSONEncoder().encode(details).write(to: rawFile, options: .atomic); return 1 } }
            )
            rows.append(Harness.row("JSON file save, \(count) moments", unit: "saves/s", saves, target: 0.80))
            let loads = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { _ = try await sdk.load(userID: "0"); return 1 } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { _ = try JSONDecoder().decode(MomentsDetails.self, from: Data(contentsOf: rawFile)); return 1 } }
            )
            rows.append(Harness.row("JSON file load, \(count) moments", unit: "loads/s", loads, target: 0.80))
        }
        return rows
    }
}
