import Foundation
import Moments
import MomentsTestSupport
import Testing
import MomentsTestTraits

@Suite(.ownThread) struct InMemoryPersistenceConformance {
    @Test(arguments: PersistenceConformance.checks)
    func conforms(_ check: PersistenceConformance.Check) async throws {
        try await check.run { InMemoryPersistence() }
    }
}

@Suite(.ownThread) struct JSONFilePersistenceConformance {
    @Test(arguments: PersistenceConformance.checks + PersistenceConformance.durableChecks)
    func conforms(_ check: PersistenceConformance.Check) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try await check.run { try JSONFilePersistence(directory: directory.url) }
    }
}
