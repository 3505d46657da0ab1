import Foundation
import Moments
@testable import MomentsPostgres
import MomentsSupport
import MomentsTestSupport
import Testing

/// What `PostgresPersistence` promises beyond the shared persistence contract: typed
/// failures that never show the password, a like that writes one row, a bounded pool,
/// libpq kept off Swift's threads, a lost connection survived.
@Suite struct PostgresPersistenceTests {
    private static func persistenceError(_ body: () async throws -> Void) async -> PersistenceError? {
        do {
            try await body()
            return nil
        } catch let error as PersistenceError {
            return error
        } catch {
            Issue.record("not a PersistenceError: \(error)")
            return nil
        }
    }

    @Test func aServerNobodyListensOnIsConnectionFailedAndTheMessageHidesThePassword() async throws {
        let port = refusedLoopbackPort()
        let error = await Self.persistenceError {
            _ = try await PostgresPersistence(connectionString: "host=127.0.0.1 port=\(port) dbname=m user=app password=hunter2 connect_timeout=5")
        }
        #expect(error?.code == .connectionFailed)
        #expect(error?.location == "postgres://app@127.0.0.1:\(port)/m")
        #expect(error.map { !"\($0)".contains("hunter2") } == true)
        #expect((error?.underlyingError as? PostgresError)?.kind == .connectionFailed)
    }

    /// libpq repeats a connection string it cannot parse in its message: the password in
    /// it never reaches the error, in any form the string takes.
    @Test(arguments: [
        "postgresql://app:S3CRET-PW-1@[::1/db",
        "postgresql://app:S3CRET-PW-1@127.0.0.1:%zz/db",
        "host=127.0.0.1 password=S3CRET-PW-1 dbname='unterminated",
        "postgresql://app:S3CRET-PW-1@127.0.0.1:\(refusedLoopbackPort())/db?connect_timeout=5",
    ])
    func aConnectionStringsPasswordNeverReachesTheError(connectionString: String) async throws {
        let error = await Self.persistenceError { _ = try await PostgresPersistence(connectionString: connectionString) }
        let text = "\(String(describing: error)) \(String(reflecting: error))"
        #expect(error != nil)
        #expect(!text.contains("S3CRET"), "\(text)")
    }

    @Test func aWrongPasswordIsAuthenticationFailedAndTheRightOneConnects() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        let base = "host=127.0.0.1 port=\(server.port) dbname=\(name) user=\(PostgresServer.passwordRole) connect_timeout=5"
        let error = await Self.persistenceError {
            _ = try await PostgresPersistence(connectionString: base + " password=wrong-secret")
        }
        #expect(error?.code == .authenticationFailed, "\(String(describing: error))")
        #expect(error.map { !"\($0)".contains("wrong-secret") } == true)

        let persistence = try await PostgresPersistence(connectionString: base + " password='\(PostgresServer.password)'")
        try await persistence.save(SampleTimelines.timeline(user: "a", moments: 2), for: "a")
        #expect(try await persistence.load(userID: "a") == SampleTimelines.timeline(user: "a", moments: 2))
    }

    @Test func aDatabaseFromANewerSDKIsRefused() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        _ = try await PostgresPersistence(connectionString: database)
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        try await server.sql("UPDATE moments_schema SET version = \(PostgresSchema.currentVersion + 1)", database: String(name))
        let error = await Self.persistenceError { _ = try await PostgresPersistence(connectionString: database) }
        #expect(error?.code == .unsupportedVersion)
    }

    @Test func aLostConnectionIsOpenedAgainAndTheCallRetried() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        let persistence = try await PostgresPersistence(connectionString: database, configuration: .init { $0.poolSize = 1 })
        try await persistence.save(SampleTimelines.timeline(user: "a", moments: 3), for: "a")
        try await server.terminateConnections(to: String(name))
        #expect(try await persistence.load(userID: "a") == SampleTimelines.timeline(user: "a", moments: 3))
        try await server.terminateConnections(to: String(name))
        try await persistence.save(SampleTimelines.timeline(user: "a", moments: 4), for: "a")
        #expect(try await persistence.load(userID: "a") == SampleTimelines.timeline(user: "a", moments: 4))
    }

    /// Every row's version (`xmin`, the transaction that last wrote it), by table and key.
    private static func rowVersions(_ connection: PostgresConnection) throws -> [String: String] {
        let result = try connection.query("""
            SELECT 'moment ' || id, xmin::text FROM moments_moment
            UNION ALL SELECT 'timeline ' || user_id, xmin::text FROM moments_timeline
            UNION ALL SELECT 'entry ' || user_id || '/' || position, xmin::text FROM moments_timeline_entry
            """)
        var versions: [String: String] = [:]
        for row in 0..<result.rowCount {
            if let key = result.text(row, 0) { versions[key] = result.text(row, 1) }
        }
        return versions
    }

    @Test func aConfirmedLikeWritesOneRow() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let persistence = try await PostgresPersistence(connectionString: database)
        let timeline = SampleTimelines.timeline(user: "a", moments: 200)
        try await persistence.save(timeline, for: "a")
        try await persistence.save(SampleTimelines.timeline(user: "b", moments: 10), for: "b")
        let connection = try PostgresConnection(connectionString: database)
        let before = try Self.rowVersions(connection)
        let expectedRows = 2 + 210 + 210  // timelines, moments, entries
        #expect(before.count == expectedRows)

        var liked = timeline.moments[7]
        liked.likes = (liked.likes ?? []) + [Moment.LikedUser(id: "z", avatar: "https://img/z.jpg")]
        try await persistence.save(PersistenceBatch(moments: [liked]))

        let after = try Self.rowVersions(connection)
        #expect(Set(after.keys) == Set(before.keys))
        let rewritten: [String] = after.filter { before[$0.key] != $0.value }.map(\.key)
        #expect(rewritten == ["moment " + StoredID.encode(liked.id)])
        #expect(try await persistence.load(userID: "a")?.moments[7].likes == liked.likes)
    }

    @Test func thePoolNeverOpensMoreConnectionsThanItsSize() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let persistence = try await PostgresPersistence(connectionString: database, configuration: .init { $0.poolSize = 2 })
        try await persistence.save(SampleTimelines.timeline(user: "a", moments: 20), for: "a")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<32 { group.addTask { _ = try await persistence.load(userID: "a") } }
            try await group.waitForAll()
        }
        let connection = try PostgresConnection(connectionString: database)
        let open = try connection.query("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
        // At most two pooled connections and the change feed's. The pool opens its second
        // connection only when a load finds the first busy, which a busy machine may never
        // arrange, so fewer is no failure.
        let count = Int(open.text(0, 0) ?? "") ?? -1
        #expect((1...3).contains(count), "\(count) connections")
    }

    @Test func libpqRunsOnTheConnectionsOwnThreads() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let persistence = try await PostgresPersistence(connectionString: database)
        let onOwnThreads = try await withThrowingTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 { group.addTask { try await persistence.run(userID: nil) { _ in ThreadExecutor.isRunningOnAnExecutorThread } } }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(onOwnThreads == Array(repeating: true, count: 8))
        #expect(!ThreadExecutor.isRunningOnAnExecutorThread, "the test itself runs on Swift's threads")
    }
}
