import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing

/// A child process hammering likes and refreshes through a `MomentsStore` into SQLite,
/// killed with SIGKILL at random moments, 50 times.
@Suite struct SQLiteStoreCrashTests {
    @Test func fiftyKillsLeaveAConsistentLastCommittedState() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store.sqlite").path
        var version = 1
        var committed = 0
        for _ in 0..<50 {
            committed += try await CrashHarness.round(kind: "sqlite", path: path, users: 5, startVersion: version, window: 20...150, throughStore: true) {
                try SQLitePersistence(path: path)
            }
            version += 100_000
        }
        #expect(committed > 50)
    }
}
