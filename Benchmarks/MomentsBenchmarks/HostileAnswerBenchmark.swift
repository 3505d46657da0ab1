import Foundation
import Moments
import MomentsHTTP
import MomentsNetworking
import MomentsSQLite
import MomentsBFF

/// The peak resident memory of one refresh whose answer holds 300,000 moments (the
/// bytes through the client, decoded, applied, emitted and persisted), one persistence
/// per process: `--only hostile-json` or `--only hostile-sqlite`.
enum HostileAnswerBenchmark {
    static let moments = 300_000
    static let limit = 512.0

    static func run(persistence kind: String) async throws -> [Row] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-bench-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let answer = answerBytes(moments: moments)
        let before = currentResidentBytes()
        let persistence: any MomentsPersistence = kind == "json"
            ? try await JSONFilePersistence.open(directory: directory)
            : try await SQLitePersistence.open(path: directory.appendingPathComponent("hostile.sqlite").path)
        let transport = InstantTransport(response: HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: answer))
        let client = HTTPClient(baseURL: URL(string: "http://127.0.0.1:1")!, transport: transport) { $0.maximumResponseSize = nil }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
        let seconds = try await Harness.time { _ = try await store.refresh(userID: "0") }
        await store.shutdown()
        let peak = Double(peakResidentBytes()) / 1_048_576
        return [Row(
            name: "a \(moments / 1_000),000-moment answer (\(answer.count / 1_048_576) MiB) into \(kind == "json" ? "JSON files" : "SQLite"): peak RSS",
            unit: "MiB", sdk: peak, baseline: nil, ratio: nil, target: nil,
            note: String(format: "limit %.0f MiB; %.0f MiB before, the answer's bytes included; refresh %.1f s; %@",
                         limit, Double(before) / 1_048_576, seconds, peak < limit ? "within the limit" : "OVER THE LIMIT")
        )]
    }

    /// The answer's bytes, written directly (a model and `JSONEncoder` would cost more
    /// memory than the refresh measured): moments of the BFF's shape, about 330 bytes each.
    static func answerBytes(moments count: Int) -> Data {
        var text = #"{"data":{"getMomentsDetailsByUserID":{"userDetails":{"id":"0","name":"Zero","avatar":"https://a.example.com/0.jpg","backgroundImage":"https://b.example.com/0.jpg"},"moments":["#
        text.reserveCapacity(count * 340)
        for index in 0..<count {
            if index > 0 { text += "," }
            let liked = index % 3 == 0
            text += #"{"id":"\#(index)","userDetails":{"id":"a\#(index % 50)","name":"Author \#(index % 50)","avatar":"https://images.example.com/a\#(index % 50).jpg"},"#
            text += #""type":"URL","title":"Moment \#(index)","url":"https://moments.example.com/m\#(index)","photos":["https://images.example.com/m\#(index).jpg"],"#
            text += #""createdDate":"\#(1_605_521_360 - index)","isLiked":\#(liked),"likes":\#(liked ? #"[{"id":"0","avatar":"https://images.example.com/u0.jpg"}]"# : "[]")}"#
        }
        text += "]}}}"
        return Data(text.utf8)
    }
}
