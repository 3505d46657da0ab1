import Foundation
import Moments
@testable import MomentsPostgres
import MomentsTestSupport
import Testing

/// A moment's row keeps the answers to likes (`LikeConfirmation`) until a write the
/// server certainly computed after them: an older value another instance saves at an
/// overlapping time cannot undo a confirmed like, for any instance that loads the row.
@Suite struct PostgresLikeConfirmationTests {
    private static func interval(_ from: Double, _ to: Double) -> ConfirmationInterval {
        ConfirmationInterval(notBefore: Date(timeIntervalSince1970: from), notAfter: Date(timeIntervalSince1970: to))
    }

    private static let liker = Moment.LikedUser(id: "a", avatar: "https://img/a.jpg")

    /// User "a"'s timeline of one moment, liked by `a` or by no one, saved within `interval`.
    private static func timeline(liked: Bool, within interval: ConfirmationInterval, confirming: Bool = false) -> PersistenceBatch {
        var details = SampleTimelines.timeline(user: "a", moments: 1)
        details.moments[0].likes = liked ? [liker] : []
        details.moments[0].isLiked = liked
        var batch = PersistenceBatch(timeline: details, for: "a")
        batch.confirmedWithin = interval
        if confirming {
            batch.likeConfirmations = [LikeConfirmation(momentID: details.moments[0].id, liker: liker, isLiked: liked, confirmedWithin: interval)]
        }
        return batch
    }

    private static func contested(_ event: SharedChangeEvent?) -> Bool? {
        guard case .committed(let commit)? = event else { return nil }
        return commit.moments.first?.isContested
    }

    @Test func anOverlappingOlderSaveCannotUndoAConfirmedLikeUntilANewerOneDoes() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let first = try await PostgresPersistence(connectionString: database)
        let second = try await PostgresPersistence(connectionString: database)
        let reader = try await PostgresPersistence(connectionString: database)
        let firstEvents = StreamProbe(first.sharedChanges())

        try await first.save(Self.timeline(liked: false, within: Self.interval(1_000, 1_001)))
        // The answer to a's like, computed from 1,003 to 1,005.
        try await second.save(Self.timeline(liked: true, within: Self.interval(1_003, 1_005), confirming: true))
        #expect(try await reader.load(userID: "a")?.moments.first?.likes?.map(\.id) == ["a"])

        // An answer computed before the like, received after it: its interval overlaps.
        try await first.save(Self.timeline(liked: false, within: Self.interval(1_002, 1_006)))
        let kept = try #require(try await reader.load(userID: "a")?.moments.first)
        #expect(kept.likes?.map(\.id) == ["a"], "the older value undid a confirmed like")
        // The writer hears that the row differs from what it wrote: the server settles it.
        let events = await firstEvents.waitFor(count: 2)
        #expect(events.dropFirst().first.flatMap(Self.contested) == true)

        // Computed certainly after the like's answer: it settles the register.
        try await first.save(Self.timeline(liked: false, within: Self.interval(1_007, 1_008)))
        let settled = try #require(try await reader.load(userID: "a")?.moments.first)
        #expect(settled.likes == [])
    }

    @Test func aDatabaseOfTheFirstVersionIsMigratedAndKeepsItsRows() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        // A database as the first version left it, with one timeline.
        try await server.sql("CREATE TABLE moments_schema (version integer NOT NULL); INSERT INTO moments_schema VALUES (1);" + PostgresSchema.migrations[0],
                             database: String(name))
        let moment = SampleTimelines.moment(id: "m1")
        func literal(_ value: some Encodable) throws -> String {
            String(decoding: try JSONEncoder().encode(value), as: UTF8.self).replacingOccurrences(of: "'", with: "''")
        }
        try await server.sql("""
            INSERT INTO moments_moment (id, value) VALUES ('m1', '\(try literal(moment))');
            INSERT INTO moments_timeline (user_id, owner) VALUES ('a', '\(try literal(SampleTimelines.timeline(user: "a", moments: 1).userDetails))');
            INSERT INTO moments_timeline_entry (user_id, position, moment_id, is_liked) VALUES ('a', 0, 'm1', NULL);
            """, database: String(name))

        let persistence = try await PostgresPersistence(connectionString: database)
        let loaded = try #require(try await persistence.load(userID: "a"))
        #expect(loaded.moments.map(\.id) == ["m1"])
        try await persistence.save(Self.timeline(liked: true, within: Self.interval(1_003, 1_005), confirming: true))
        #expect(try await persistence.load(userID: "a")?.moments.first?.likes?.map(\.id) == ["a"])
    }
}
