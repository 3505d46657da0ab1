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
}
