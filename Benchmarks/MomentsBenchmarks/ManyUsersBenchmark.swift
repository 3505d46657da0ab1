import Foundation
import Moments
import MomentsSQLite

/// 100,000 users' timelines served by one `MomentsStore` over SQLite, with at most
/// 1,000 timelines in memory; reports the peak resident memory.
enum ManyUsersBenchmark {
    /// Answers refreshes from a generated timeline, instantly.
    struct GeneratedService: MomentsService {
        func getMoments(userID: String) -> MomentsDetails { BenchmarkData.timeline(user: userID, moments: 10) }
        func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
            BenchmarkData.timeline(user: userID, moments: 10)
        }
    }

    static func run(users: Int) async throws -> [Row] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-bench-users-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let persistence = try SQLitePersistence(path: directory.appendingPathComponent("users.sqlite").path)
        let store = MomentsStore(service: GeneratedService(), persistence: persistence, configuration: .init { $0.maximumTimelinesInMemory = 1_000 })
        let before = currentResidentBytes()

        let refreshSeconds = try await Harness.time {
            for user in 0..<users { try await store.refresh(userID: "user-\(user)") }
        }
        var served = 0
        let readSeconds = try await Harness.time {
            for user in stride(from: 0, to: users, by: 1) where try await store.details(for: "user-\(user)") != nil { served += 1 }
        }
        let inMemory = await store.timelinesInMemory
        let peak = peakResidentBytes()
        guard served == users else { throw BenchmarkFailure("only \(served) of \(users) timelines were served") }
        return [
            Row(name: "\(users) users: refresh all (fetch + persist + emit)", unit: "users/s", sdk: Double(users) / refreshSeconds),
            Row(name: "\(users) users: read all back (\(inMemory) in memory, rest from SQLite)", unit: "users/s", sdk: Double(users) / readSeconds),
            Row(name: "\(users) users: peak RSS", unit: "MiB", sdk: Double(peak) / 1_048_576, baseline: nil, ratio: nil, target: nil,
                note: String(format: "limit 1024 MiB; %.0f MiB before the run; %@", Double(before) / 1_048_576, peak < 1 << 30 ? "within the limit" : "OVER THE LIMIT")),
        ]
    }
}
