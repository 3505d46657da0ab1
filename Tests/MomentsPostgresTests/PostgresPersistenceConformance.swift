import Foundation
import Moments
import MomentsPostgres
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// The shared persistence contract, against a real PostgreSQL server (a database per check).
@Suite(.ownThread) struct PostgresPersistenceConformance {
    @Test(arguments: PersistenceConformance.checks + PersistenceConformance.durableChecks)
    func conforms(_ check: PersistenceConformance.Check) async throws {
        let server = try await PostgresServer.shared()
        let connectionString = try await server.createDatabase()
        try await check.run { try await PostgresPersistence(connectionString: connectionString) }
    }
}
