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

        let committed = try await CrashHarness.storeRounds(50, kind: "sqlite", path: path) { try SQLitePersistence(path: path) }

        #expect(committed > 50)
    }
}
