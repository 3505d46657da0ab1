import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsTestTraits

@Suite(.ownThread) struct SQLitePersistenceConformance {
    @Test(arguments: PersistenceConformance.checks + PersistenceConformance.durableChecks)
    func conformsOnDisk(_ check: PersistenceConformance.Check) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("moments.sqlite").path
        try await check.run { try SQLitePersistence(path: path) }
    }

    @Test(arguments: PersistenceConformance.checks)
    func conformsInMemory(_ check: PersistenceConformance.Check) async throws {
        try await check.run { try SQLitePersistence(path: ":memory:") }
    }
}
