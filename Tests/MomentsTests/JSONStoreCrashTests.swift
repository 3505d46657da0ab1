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

        let committed = try await CrashHarness.storeRounds(50, kind: "json", path: path) {
            try JSONFilePersistence(directory: URL(fileURLWithPath: path))
        }

        #expect(committed > 50)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasPrefix(".tmp-") }
        #expect(leftovers.count <= 50, "at most one temporary file per kill")
    }
}
