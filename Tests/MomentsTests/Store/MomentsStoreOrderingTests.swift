import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsObservability

/// The ordering rule on the orders that broke it before: each test scripts when the
/// server processes each request and when each answer arrives.
@Suite struct MomentsStoreOrderingTests {
    private static func store(
        timelines: [String: [String]] = ["0": ["m0", "m1", "m2"], "1": ["m0", "m9"], "2": ["m0", "m9"]],
        likers: [String: [String]] = ["m0": ["9"]]
    ) -> (MomentsStore, SimulatedService, InMemoryPersistence) {
        let service = SimulatedService(server: SimulatedServer(timelines: timelines, likers: likers))
        let persistence = InMemoryPersistence()
        return (MomentsStore(service: service, persistence: persistence), service, persistence)
    }

    @Test func likesOfTwoMomentsAnsweredInReverseOrderAreBothKept() async throws {
        let (store, service, persistence) = Self.store()
        let refresh = Task { try await store.refresh(userID: "0") }
        let call = await service.waitForCalls(1)[0]
        await service.process(call)
        await service.deliver(call)
        _ = try await refresh.value

        let first = Task { try await store.setLike(true, momentID: "m0", userID: "0") }
        let firstCall = await service.waitForCalls(1)[0]
        let second = Task { try await store.setLike(true, momentID: "m1", userID: "0") }
        let secondCall = await service.waitForCalls(2)[1]
        // The server applies both in call order; the first answer comes back last.
        await service.process(firstCall)
        await service.process(secondCall)
        await service.deliver(secondCall)
        _ = try await second.value
        await service.deliver(firstCall)
        let answer = try await first.value

        #expect(answer.isLiked("m0") == true && answer.isLiked("m1") == true)
        // The first answer says user 0 does not like m1, the second that they do, in an
        // order the store cannot know (what `isLiked` means is the server's: another
        // user's like may change it): the store keeps what it shows and asks again.
        let refetch = await service.waitForCalls(1)[0]
        await service.process(refetch)
        await service.deliver(refetch)
        await store.waitUntilIdle()
        let held = try await store.details(for: "0")
        #expect(held?.isLiked("m0") == true && held?.isLiked("m1") == true)
        #expect(await persistence.load(userID: "0") == held)
        #expect(held == (await service.server.timeline("0")))
    }

    @Test func aRefreshComputedBeforeALikeDoesNotUndoIt() async throws {
        let (store, service, persistence) = Self.store()
        for user in ["1", "2"] {
            let refresh = Task { try await store.refresh(userID: user) }
            let id = await service.waitForCalls(1)[0]
            await service.process(id)
            await service.deliver(id)
            _ = try await refresh.value
        }
        let probe = StreamProbe(await store.updates(for: "2"))
        await probe.waitFor(count: 1)

        // User 2's refresh is computed first and held on its way back…
        let staleRefresh = Task { try await store.refresh(userID: "2") }
        let staleCall = await service.waitForCalls(1)[0]
        await service.process(staleCall)
        // …while user 1 likes m0, which user 2's timeline holds too.
        let like = Task { try await store.setLike(true, momentID: "m0", userID: "1") }
        let likeCall = await service.waitForCalls(2)[1]
        await service.process(likeCall)
        await service.deliver(likeCall)
        _ = try await like.value
        await service.deliver(staleCall)
        _ = try await staleRefresh.value
        await store.waitUntilIdle()

        let truth = await service.server.timeline("2")
        #expect(truth.likers("m0") == ["9", "1"])
        #expect(try await store.details(for: "2") == truth)
        #expect(await persistence.load(userID: "2") == truth)
        #expect(await probe.waitUntil { $0 == truth } == truth)
        let shown = try #require(probe.values.firstIndex { $0.likers("m0") == ["9", "1"] })
        #expect(probe.values[shown...].allSatisfy { $0.likers("m0") == ["9", "1"] }, "once user 1's like is shown in user 2's timeline, it stays")
    }

    @Test func anAnswerWhoseOrderCannotBeKnownIsSettledByTheServer() async throws {
        let (store, service, _) = Self.store()
        let log = LogCollector()
        let loggingStore = MomentsStore(service: service, persistence: InMemoryPersistence(), configuration: .init { $0.logHandler = log.handler })
        _ = store
        // Two refreshes of different users overlap a like by a third party the store
        // does not know about: their answers disagree on m0, in an order nobody can know.
        let refreshOne = Task { try await loggingStore.refresh(userID: "1") }
        let one = await service.waitForCalls(1)[0]
        let refreshTwo = Task { try await loggingStore.refresh(userID: "2") }
        let two = await service.waitForCalls(2)[1]
        await service.process(one)
        _ = await service.serverLike(true, momentID: "m0", userID: "7")
        await service.process(two)
        await service.deliver(two)
        _ = try await refreshTwo.value
        await service.deliver(one)
        _ = try await refreshOne.value

        // The store asks again (a refetch sent after both answers arrived) rather than guess.
        let refetch = await service.waitForCalls(1)[0]
        await service.process(refetch)
        await service.deliver(refetch)
        await loggingStore.waitUntilIdle()
        #expect(try await loggingStore.details(for: "1") == (await service.server.timeline("1")))
        #expect(log.messages.contains { $0.contains("refetching to settle") })
    }

    @Test func anAnswerListingAMomentTwiceIsRefusedNamingItAndWritesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try JSONFilePersistence(directory: directory.url)
        let service = ScriptedListService(lists: [["once", "twice", "twice"]])
        let store = MomentsStore(service: service, persistence: persistence)

        let error = await #expect(throws: MomentsStoreError.self) { try await store.refresh(userID: "0") }

        #expect(error?.code == .duplicateMomentID)
        #expect(error?.momentID == "twice")
        #expect(error?.description.contains("\"twice\"") == true)
        #expect(try await persistence.load(userID: "0") == nil)
        #expect(try await store.details(for: "0") == nil)
    }

    /// Moments the store already holds, listed twice in a new list (with a new moment,
    /// or without one; where the old list had them, or elsewhere), are refused like new
    /// ones, and the stored timeline stays.
    @Test(arguments: [["once", "kept", "kept"], ["kept", "new", "once", "kept"], ["new", "kept", "new"],
                      ["once", "once"], ["once", "kept", "once"], ["kept", "once", "kept"], ["new", "once", "once", "kept"]])
    func aNewListNamingAHeldMomentTwiceIsRefusedAndTheTimelineStays(list: [String]) async throws {
        let persistence = InMemoryPersistence()
        let service = ScriptedListService(lists: [["once", "kept"], list])
        let store = MomentsStore(service: service, persistence: persistence)
        let before = try await store.refresh(userID: "0")

        let error = await #expect(throws: MomentsStoreError.self) { try await store.refresh(userID: "0") }

        #expect(error?.code == .duplicateMomentID)
        #expect(error?.momentID == (list.filter { id in list.filter { $0 == id }.count > 1 }.first))
        #expect(try await store.details(for: "0") == before)
        #expect(await persistence.load(userID: "0") == before)
        // The refused list left no mark behind: the next answer of a good list applies.
        let after = try await store.refresh(userID: "0")
        #expect(after.moments.map(\.id) == ["once", "kept"])
    }
}

/// Answers each refresh with the next of `lists` (then the first again), each id one fixture moment.
private actor ScriptedListService: MomentsService {
    let lists: [[String]]
    var next = 0
    init(lists: [[String]]) { self.lists = lists }

    func getMoments(userID: String) -> MomentsDetails {
        defer { next += 1 }
        return Fixtures.timeline(user: userID, moments: lists[next % lists.count].map { Fixtures.moment($0) })
    }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
        getMoments(userID: userID)
    }
}

/// Collects a store's log records.
final class LogCollector: Sendable {
    private let records = Locked<[String]>([])

    var handler: LogHandler { { [records] record in records.update { $0.append(record.description) } } }

    var messages: [String] { records.value }
}
