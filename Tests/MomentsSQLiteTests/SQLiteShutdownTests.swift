import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing

/// A store shut down over SQLite: the database is closed (every later call a typed
/// error) and the file holds every confirmed like.
@Suite struct SQLiteShutdownTests {
    @Test func shutdownClosesTheDatabaseAndLeavesEveryConfirmedLikeInIt() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("s.sqlite").path
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["a", "b", "c"])
        let persistence = try SQLitePersistence(path: path)
        let store = MomentsStore(service: service, persistence: persistence)
        try await store.refresh(userID: "0")
        async let likeA = store.setLike(true, momentID: "a", userID: "0")
        async let likeC = store.setLike(true, momentID: "c", userID: "0")
        _ = try await (likeA, likeC)

        await store.shutdown()

        let closed = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "0") }
        #expect(closed?.code == .closed)
        let reopened = try SQLitePersistence(path: path)
        let saved = try #require(try await reopened.load(userID: "0"))
        #expect(saved.moments.map { $0.isLiked } == [true, false, true])
    }

    /// Closed by its owner directly, not through a store (a persistence whose own
    /// `close()` is synchronous would lose to the protocol's asynchronous default).
    @Test func closingThePersistenceItselfClosesTheDatabase() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try await SQLitePersistence.open(path: directory.url.appendingPathComponent("s.sqlite").path)
        try await persistence.save(SampleTimelines.timeline(user: "0", moments: 2), for: "0")
        await persistence.close()
        let closed = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "0") }
        #expect(closed?.code == .closed)
        await persistence.close()  // again: nothing happens
    }
}
