import Foundation
import Moments
import MomentsTestSupport
import Testing

/// A child process hammering likes and refreshes through a `MomentsStore` into JSON
/// files, killed with SIGKILL at random moments, 50 times.
@Suite struct JSONStoreCrashTests {
    @Test func fiftyKillsLeaveAConsistentLastCommittedState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store").path
        var version = 1
        var committed = 0
        for _ in 0..<50 {
            committed += try await CrashHarness.round(kind: "json", path: path, users: 5, startVersion: version, window: 20...150, throughStore: true) {
                try JSONFilePersistence(directory: URL(fileURLWithPath: path))
            }
            version += 100_000
        }
        #expect(committed > 50)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix(".tmp-") }
        #expect(leftovers.count <= 50, "at most one temporary file per kill")
    }
}
