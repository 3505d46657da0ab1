import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing

/// Several processes on one SQLite file: each connection's persistence is also a change
/// bus delivering the others' commits (two connections in one test process stand in for
/// two processes: SQLite tells them apart the same way).
@Suite struct SQLiteChangeBusTests {
    private static func open(_ path: String) async throws -> SQLitePersistence {
        var configuration = SQLitePersistence.Configuration()
        configuration.changePollInterval = .milliseconds(5)
        return try await SQLitePersistence.open(path: path, configuration: configuration)
    }

    @Test func aLikeThroughOneProcessReachesTheOthersSubscriberWithoutARefresh() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("shared.sqlite").path
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["a", "b"])
        let (first, second) = (try await Self.open(path), try await Self.open(path))
        let a = MomentsStore(service: service, persistence: first, configuration: .init { $0.changeBus = first })
        let b = MomentsStore(service: service, persistence: second, configuration: .init { $0.changeBus = second })
        try await b.refresh(userID: "0")
        let probe = StreamProbe(await b.updates(for: "0"))

        try await a.refresh(userID: "0")
        try await a.setLike(true, momentID: "a", userID: "0")

        let seen = await probe.waitUntil(timeout: .seconds(120)) { $0.moment(withID: "a")?.isLiked == true }
        #expect(seen?.moment(withID: "a")?.likes?.map(\.id) == ["0"])
        #expect(try await b.details(for: "0") == (try await service.serverTimeline("0")))
        probe.cancel()
    }

    /// Two connections to one file in `directory`, as two processes would have.
    private static func twoConnections(in directory: TemporaryDirectory) async throws -> (SQLitePersistence, SQLitePersistence) {
        let path = directory.url.appendingPathComponent("shared.sqlite").path
        return (try await open(path), try await open(path))
    }

    /// What a commit event says, in short.
    private static func summary(_ event: SharedChangeEvent) -> [String] {
        guard case .committed(let commit) = event else { return ["\(event)"] }
        return commit.timelines.map { "saved \($0.userID)" } + commit.removedUserIDs.map { "removed \($0)" }
    }

    @Test func theBusDeliversOtherConnectionsCommitsInOrderAndNeverItsOwn() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (mine, other) = try await Self.twoConnections(in: directory)
        // Each event is read from the rows as they are when it is delivered, so each
        // commit is awaited before the next (a timeline removed before its save was
        // read is not announced as saved).
        let events = StreamProbe(mine.sharedChanges())
        defer { events.cancel() }

        try await other.save(SampleTimelines.timeline(user: "1", moments: 2), for: "1")
        #expect(await events.waitFor(count: 1, timeout: .seconds(60)).map(Self.summary) == [["saved 1"]])

        try await mine.save(SampleTimelines.timeline(user: "0", moments: 2), for: "0")
        try await other.save(SampleTimelines.timeline(user: "2", moments: 2), for: "2")
        #expect(await events.waitFor(count: 2, timeout: .seconds(60)).map(Self.summary) == [["saved 1"], ["saved 2"]])

        try await other.remove(userID: "1")
        #expect(await events.waitFor(count: 3, timeout: .seconds(60)).map(Self.summary) == [["saved 1"], ["saved 2"], ["removed 1"]])
    }

    @Test func aCommitCarriesTheRowsWithWhenTheServerComputedThem() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (mine, other) = try await Self.twoConnections(in: directory)
        let events = StreamProbe(mine.sharedChanges())
        defer { events.cancel() }

        let details = SampleTimelines.timeline(user: "1", moments: 2)
        let interval = ConfirmationInterval(notBefore: Date(timeIntervalSince1970: 1_800_000_000), notAfter: Date(timeIntervalSince1970: 1_800_000_001))
        var batch = PersistenceBatch(timeline: details, for: "1")
        batch.confirmedWithin = interval
        try await other.save(batch)

        guard case .committed(let commit)? = await events.waitFor(count: 1, timeout: .seconds(60)).first else {
            Issue.record("no commit")
            return
        }
        #expect(commit.timelines.map(\.userID) == ["1"])
        #expect(commit.timelines.first?.confirmedWithin == interval)
        #expect(commit.moments.map(\.moment.id).sorted() == details.moments.map(\.id).sorted())
        #expect(commit.moments.allSatisfy { $0.confirmedWithin == interval && !$0.isContested })
        #expect(try await mine.committedState(momentIDs: [], userIDs: ["1"]) == commit)
    }

    /// A timeline saved over a different one whose order against it is unknown (their
    /// intervals overlap) is contested: both connections' buses deliver it, flagged, so
    /// every instance asks the server; one certainly newer replaces it quietly.
    @Test func aTimelineSavedOverADifferentOneOfUnknownOrderIsContested() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let (mine, other) = try await Self.twoConnections(in: directory)
        let minesEvents = StreamProbe(mine.sharedChanges())
        let othersEvents = StreamProbe(other.sharedChanges())
        defer { minesEvents.cancel(); othersEvents.cancel() }
        func interval(_ start: TimeInterval, _ end: TimeInterval) -> ConfirmationInterval? {
            ConfirmationInterval(notBefore: Date(timeIntervalSince1970: start), notAfter: Date(timeIntervalSince1970: end))
        }
        func save(_ details: MomentsDetails, _ within: ConfirmationInterval?, through persistence: SQLitePersistence) async throws {
            var batch = PersistenceBatch(timeline: details, for: "1")
            batch.confirmedWithin = within
            try await persistence.save(batch)
        }
        let three = SampleTimelines.timeline(user: "1", moments: 3)
        var two = three
        two.moments.removeLast()

        try await save(three, interval(1_800_000_000, 1_800_000_010), through: other)
        guard case .committed(let first)? = await minesEvents.waitFor(count: 1, timeout: .seconds(60)).last else { Issue.record("no commit"); return }
        #expect(first.timelines.map(\.isContested) == [false], "nothing was stored before it")

        try await save(two, interval(1_800_000_005, 1_800_000_020), through: mine)
        guard case .committed(let ownContest)? = await minesEvents.waitFor(count: 2, timeout: .seconds(60)).last else { Issue.record("no contest"); return }
        #expect(ownContest.timelines.map(\.userID) == ["1"])
        #expect(ownContest.timelines.map(\.isContested) == [true], "its own save is delivered back for what it contested")
        guard case .committed(let seen)? = await othersEvents.waitFor(count: 1, timeout: .seconds(60)).last else { Issue.record("not delivered"); return }
        #expect(seen.timelines.map(\.isContested) == [true])
        #expect(seen.timelines.first?.details.moments.count == 2)

        try await save(three, interval(1_800_000_030, 1_800_000_031), through: other)
        guard case .committed(let newer)? = await minesEvents.waitFor(count: 3, timeout: .seconds(60)).last else { Issue.record("no commit"); return }
        #expect(newer.timelines.map(\.isContested) == [false], "certainly newer: no contest")
    }
}
