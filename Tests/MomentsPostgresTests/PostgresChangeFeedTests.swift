import Foundation
import Moments
@testable import MomentsPostgres
import MomentsTestSupport
import Testing

/// The change feed's contract (see `MomentsChangeBus`), read off a real PostgreSQL
/// server by two `PostgresPersistence` instances on one database.
@Suite struct PostgresChangeFeedTests {
    private static func interval(_ from: Double, _ to: Double) -> ConfirmationInterval {
        ConfirmationInterval(notBefore: Date(timeIntervalSince1970: from), notAfter: Date(timeIntervalSince1970: to))
    }

    /// Two instances on a new database, each with a probe of its change feed.
    private static func twoInstances() async throws -> (
        PostgresPersistence, PostgresPersistence, StreamProbe<SharedChangeEvent>, StreamProbe<SharedChangeEvent>
    ) {
        let database = try await PostgresServer.shared().createDatabase()
        let first = try await PostgresPersistence(connectionString: database)
        let second = try await PostgresPersistence(connectionString: database)
        return (first, second, StreamProbe(first.sharedChanges()), StreamProbe(second.sharedChanges()))
    }

    /// Saves user "a"'s timeline of one moment nobody likes, confirmed from 1,000 to 1,002.
    private static func saveUnlikedTimeline(on persistence: PostgresPersistence) async throws -> MomentsDetails {
        var timeline = SampleTimelines.timeline(user: "a", moments: 1)
        timeline.moments[0].likes = []
        var batch = PersistenceBatch(timeline: timeline, for: "a")
        batch.confirmedWithin = interval(1_000, 1_002)
        try await persistence.save(batch)
        return timeline
    }

    private static func contested(_ event: SharedChangeEvent?) -> [String: Bool] {
        guard case .committed(let commit)? = event else { return [:] }
        return Dictionary(commit.moments.map { ($0.moment.id, $0.isContested) }, uniquingKeysWith: { $0 || $1 })
    }

    /// Two instances save different values of one moment confirmed at overlapping times:
    /// neither can be ordered, so both instances, the writer too, hear that it is
    /// contested. A value certainly confirmed later is not.
    @Test func overlappingDifferentValuesAreContestedForEveryInstance() async throws {
        let (first, second, firstEvents, secondEvents) = try await Self.twoInstances()
        let timeline = try await Self.saveUnlikedTimeline(on: first)
        let id = timeline.moments[0].id
        #expect(Self.contested(await secondEvents.waitFor(count: 1).first) == [id: false])

        // Liked, confirmed from 1,001 to 1,003: overlapping the stored value's interval.
        var liked = timeline.moments[0]
        liked.likes = [Moment.LikedUser(id: "b", avatar: "https://img/b.jpg")]
        try await second.save(PersistenceBatch(moments: [liked], confirmedWithin: Self.interval(1_001, 1_003)))
        // The other instance hears of the rows, then (in the same commit's order) of the contest.
        #expect(Self.contested(await firstEvents.waitFor(count: 2).last) == [id: true])
        #expect(Self.contested(await secondEvents.waitFor(count: 2).last) == [id: true], "the writer hears of what it contested")

        // Unliked, confirmed from 1,004: certainly after the stored value.
        try await first.save(PersistenceBatch(moments: [timeline.moments[0]], confirmedWithin: Self.interval(1_004, 1_005)))
        #expect(Self.contested(await secondEvents.waitFor(count: 3).last) == [id: false])
        // An equal value at an overlapping time is no contest.
        try await second.save(PersistenceBatch(moments: [timeline.moments[0]], confirmedWithin: Self.interval(1_004.5, 1_006)))
        #expect(Self.contested(await firstEvents.waitFor(count: 3).last) == [id: false])
        #expect(secondEvents.values.count == 3, "no contest, so nothing for the writer: \(secondEvents.values)")
    }

    /// The same rules for a timeline (its owner, list and each `isLiked`): two instances
    /// save the liker's timeline with different `isLiked`s confirmed at overlapping
    /// times (likes of one user through two instances); both hear it is contested. A
    /// timeline certainly older than the stored one is not written at all.
    @Test func overlappingDifferentTimelinesAreContestedAndAnOlderOneIsNotWritten() async throws {
        let (first, second, firstEvents, secondEvents) = try await Self.twoInstances()
        let timeline = try await Self.saveUnlikedTimeline(on: first)
        _ = await secondEvents.waitFor(count: 1)
        func contestedTimelines(_ event: SharedChangeEvent?) -> [String: Bool] {
            guard case .committed(let commit)? = event else { return [:] }
            return Dictionary(commit.timelines.map { ($0.userID, $0.isContested) }, uniquingKeysWith: { $0 || $1 })
        }

        var liked = timeline
        liked.moments[0].isLiked = !(timeline.moments[0].isLiked ?? false)
        var batch = PersistenceBatch(timelines: ["a": StoredTimeline(liked)])
        batch.confirmedWithin = Self.interval(1_001, 1_003)
        try await second.save(batch)
        #expect(contestedTimelines(await firstEvents.waitFor(count: 2).last) == ["a": true])
        #expect(contestedTimelines(await secondEvents.waitFor(count: 2).last) == ["a": true], "the writer hears of what it contested")
        #expect(try await first.load(userID: "a")?.moments[0].isLiked == liked.moments[0].isLiked)

        // Certainly older than the stored row (confirmed by 1,000.5): not written, not announced.
        var older = PersistenceBatch(timelines: ["a": StoredTimeline(timeline)])
        older.confirmedWithin = Self.interval(999, 1_000.5)
        try await first.save(older)
        #expect(try await second.load(userID: "a")?.moments[0].isLiked == liked.moments[0].isLiked)
        // A later save is heard, so the older one would have been heard before it.
        var later = PersistenceBatch(timelines: ["a": StoredTimeline(timeline)])
        later.confirmedWithin = Self.interval(1_010, 1_011)
        try await first.save(later)
        #expect(contestedTimelines(await secondEvents.waitFor(count: 3).last) == ["a": false])
        #expect(secondEvents.values.count == 3, "\(secondEvents.values)")
        #expect(try await second.load(userID: "a")?.moments[0].isLiked == timeline.moments[0].isLiked)
    }

    /// A value whose confirmation began at an unknown time (a batch joining an answer of
    /// unknown start) may be older than any stored value: when it replaces a different
    /// one, moment or timeline, both instances hear that it is contested.
    @Test func aValueOfUnknownStartThatReplacesADifferentOneIsContested() async throws {
        let (first, second, firstEvents, secondEvents) = try await Self.twoInstances()
        let timeline = try await Self.saveUnlikedTimeline(on: first)
        let id = timeline.moments[0].id
        _ = await secondEvents.waitFor(count: 1)

        var liked = try #require(try await first.load(userID: "a"))
        liked.moments[0].likes = [Moment.LikedUser(id: "a", avatar: "https://img/a.jpg")]
        liked.moments[0].isLiked = !(liked.moments[0].isLiked ?? false)
        try await second.save(PersistenceBatch(
            timelines: ["a": StoredTimeline(liked)], moments: [liked.moments[0]],
            confirmedWithin: ConfirmationInterval(notBefore: nil, notAfter: Date(timeIntervalSince1970: 1_005))
        ))
        // The other instance hears of the rows, then of the contested moment and timeline;
        // so does the writer, of what it contested.
        for (events, count) in [(firstEvents, 3), (secondEvents, 3)] {
            let heard = await events.waitFor(count: count).dropFirst(count - 2)
            let commits = heard.compactMap { event -> SharedCommit? in
                guard case .committed(let commit) = event else { return nil }
                return commit
            }
            #expect(commits.flatMap(\.moments).filter(\.isContested).map(\.moment.id) == [id], "\(heard)")
            #expect(commits.flatMap(\.timelines).filter(\.isContested).map(\.userID) == ["a"], "\(heard)")
        }
    }

    /// The contest is judged against the row as it is when the save takes its lock, not
    /// as it was when the save's statement began: a save waiting on another instance's
    /// uncommitted write of the same moment compares with what that write committed.
    @Test func aSaveWaitingOnAnotherWriteIsJudgedAgainstWhatThatWriteCommitted() async throws {
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        let first = try await PostgresPersistence(connectionString: database)
        let second = try await PostgresPersistence(connectionString: database)
        let firstEvents = StreamProbe(first.sharedChanges())
        let timeline = try await Self.saveUnlikedTimeline(on: first)
        let id = timeline.moments[0].id

        // Another writer holds the row, liked, uncommitted.
        var liked = timeline.moments[0]
        liked.likes = [Moment.LikedUser(id: "b", avatar: "https://img/b.jpg")]
        liked.isLiked = nil
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let holder = try PostgresConnection(connectionString: database)
        try holder.execute("BEGIN")
        try holder.query("UPDATE moments_moment SET value = $1::json, confirmed_not_before = $2, confirmed_not_after = $3 WHERE id = $4", [
            String(decoding: try encoder.encode(liked), as: UTF8.self), String(ConfirmationInterval.microseconds(Date(timeIntervalSince1970: 1_001))),
            String(ConfirmationInterval.microseconds(Date(timeIntervalSince1970: 1_003))), StoredID.encode(id),
        ])

        // The second instance saves the unliked value, confirmed at an overlapping time:
        // it waits for the row.
        let save = Task { try await second.save(PersistenceBatch(moments: [timeline.moments[0]], confirmedWithin: Self.interval(1_001.5, 1_004))) }
        let databaseName = String(name)
        #expect(await eventually {
            let watcher = try? PostgresConnection(connectionString: database)
            let waiting = try? watcher?.query("SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'", [databaseName])
            return waiting?.text(0, 0) == "1"
        }, "the second save never waited on the row")
        try holder.execute("COMMIT")
        try await save.value

        let contested = await firstEvents.waitForAny { event in
            guard case .committed(let commit) = event else { return false }
            return commit.moments.contains { $0.moment.id == id && $0.isContested }
        }
        #expect(contested != nil, "the save replaced a liked value of overlapping age and was not found contested: \(firstEvents.values)")
    }

    /// A save whose rows do not fit one notification says "everything"; its contested
    /// moments still reach the writer, in notifications that fit.
    @Test func longAnnouncementsAreSplitToFitPostgreSQLsLimit() {
        let ids = (0..<2_000).map { "moment-\($0)" }
        let announcement = ChangeAnnouncement(origin: "o", momentIDs: ids, userIDs: ["u"], contested: ids)
        let payloads = announcement.payloads
        #expect(payloads.allSatisfy { $0.utf8.count <= ChangeAnnouncement.maximumPayload })
        let decoded = payloads.compactMap(ChangeAnnouncement.init(payload:))
        #expect(decoded.count == payloads.count)
        #expect(decoded.first?.everything == true)
        #expect(decoded.dropFirst().flatMap(\.contested) == ids)
        #expect(ChangeAnnouncement(payload: #"{"o":"x","m":["a"],"u":[]}"#)?.contested == [], "older payloads still read")
    }

    /// A contested id too long for any payload is never dropped: every instance, the
    /// writer included (no origin), is told to resynchronise everything.
    @Test func aContestedIDTooLongForAnyPayloadMakesEveryInstanceResynchronise() {
        let long = String(repeating: "x", count: 9_000)
        let announcement = ChangeAnnouncement(origin: "o", momentIDs: [long], userIDs: [], contested: [long], contestedUsers: [long])
        let decoded = announcement.payloads.compactMap(ChangeAnnouncement.init(payload:))
        #expect(announcement.payloads.allSatisfy { $0.utf8.count <= ChangeAnnouncement.maximumPayload })
        #expect(decoded.filter { $0.everything && $0.origin.isEmpty }.count == 2, "\(decoded)")
    }
}
