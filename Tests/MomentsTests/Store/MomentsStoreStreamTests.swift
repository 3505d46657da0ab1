import Foundation
import Moments
import MomentsTestSupport
import Testing

@Suite struct MomentsStoreStreamTests {
    @Test func aNewSubscriberGetsTheNewestValueAtOnce() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        try await fixture.store.setLike(true, momentID: "a", userID: "0")

        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        let first = await probe.waitFor(count: 1).first

        #expect(first?.isLiked("a") == true)
        #expect(first == (try await fixture.service.serverTimeline("0")))
    }

    @Test func nothingIsEmittedBeforeAFirstValueExists() async throws {
        // Shut down, a store ends each stream after its last value: whatever it sent is
        // then in the probe.
        let empty = await StoreFixture()
        let unanswered = StreamProbe(await empty.store.updates(for: "0"))
        await empty.store.shutdown(gracePeriod: .seconds(60))
        #expect(await unanswered.waitForEnd().isEmpty)
        #expect(unanswered.isFinished)

        let fixture = await StoreFixture()
        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        try await fixture.store.refresh(userID: "0")
        await fixture.store.shutdown(gracePeriod: .seconds(60))

        let values = await probe.waitForEnd()
        #expect(values.count == 1)
        #expect(values.first?.moments.map(\.id) == ["a", "b", "c"])
    }

    @Test func everyChangeReachesEverySubscriberInOrder() async throws {
        let fixture = await StoreFixture()
        let probes = await (0..<3).asyncMap { _ in StreamProbe(await fixture.store.updates(for: "0")) }

        try await fixture.store.refresh(userID: "0")
        for probe in probes { await probe.waitFor(count: 1) }
        try await fixture.store.setLike(true, momentID: "c", userID: "0")
        for probe in probes { await probe.waitUntil { $0.isLiked("c") == true } }
        try await fixture.store.setLike(false, momentID: "c", userID: "0")
        for probe in probes { await probe.waitUntil { $0.isLiked("c") == false } }

        for probe in probes {
            let states = probe.values.map { $0.isLiked("c") }
            // refresh, optimistic like, confirmed like, optimistic unlike, confirmed unlike;
            // a consumer may skip an intermediate state, never reorder them.
            #expect(states.first == false)
            #expect(states.last == false)
            let firstLike = try #require(states.firstIndex(of: true))
            #expect(states[firstLike...].contains(false))
            #expect(!states[..<firstLike].contains(true))
        }
    }

    @Test func aSlowConsumerReceivesTheNewestStateNotABacklog() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let stream = await fixture.store.updates(for: "0")
        var iterator = stream.makeAsyncIterator()
        _ = await iterator.next()

        for round in 0..<50 {
            try await fixture.store.setLike(round % 2 == 0, momentID: "a", userID: "0")
        }

        let next = await iterator.next()
        #expect(next?.isLiked("a") == false)
        #expect(next == (try await fixture.store.details(for: "0")))
        // Nothing else is buffered: the next value is the next change's (a stale value
        // left behind, with "b" not liked, would come first).
        try await fixture.store.setLike(true, momentID: "b", userID: "0")
        #expect(await iterator.next()?.isLiked("b") == true)
    }

    @Test func continuationsAreReleasedWhenConsumersEnd() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")

        for cycle in 0..<10_000 {
            let stream = await fixture.store.updates(for: "0")
            if cycle % 2 == 0 {
                let consumer = Task { for await _ in stream {} }
                consumer.cancel()
                await consumer.value
            }
            // Odd cycles drop the stream without ever iterating it.
        }

        let released = await eventually { await fixture.store.subscriberCount(for: "0") == 0 }
        let leaked = await fixture.store.subscriberCount(for: "0")
        #expect(released, "\(leaked) continuations leaked")
    }

    @Test func subscribersOfOtherUsersReceiveNothing() async throws {
        let fixture = await StoreFixture()
        await fixture.service.addUser("9", moments: ["z"])
        let other = StreamProbe(await fixture.store.updates(for: "9"))

        try await fixture.store.refresh(userID: "0")
        try await fixture.store.setLike(true, momentID: "a", userID: "0")
        await fixture.store.shutdown(gracePeriod: .seconds(60))

        #expect(await other.waitForEnd().isEmpty)
        #expect(other.isFinished)
    }

    @Test func persistedStateIsEmittedBeforeAnyNetworkAnswer() async throws {
        let saved = SampleTimelines.timeline(user: "0", moments: 2)
        let fixture = await StoreFixture(persistence: InMemoryPersistence(["0": saved]))
        await fixture.service.holdNext()

        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        let refresh = Task { try await fixture.store.refresh(userID: "0") }

        #expect(await probe.waitFor(count: 1) == [saved])
        #expect(await withFailsafe { await fixture.service.waitForWaitingCalls(1) }, "the refresh never reached the service")
        await fixture.service.release()
        let fresh = try await refresh.value
        #expect(await probe.waitFor(count: 2).last == fresh)
        #expect(try await fixture.persistence.load(userID: "0") == fresh)
    }

    @Test func aFailedRefreshThrowsAndKeepsTheLastGoodState() async throws {
        let fixture = await StoreFixture()
        let good = try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        await probe.waitFor(count: 1)
        await fixture.service.failNext(message: "bff down")

        let error = await #expect(throws: FakeMomentsService.InjectedFailure.self) { try await fixture.store.refresh(userID: "0") }

        #expect(error?.message == "bff down")
        #expect(try await fixture.store.details(for: "0") == good)
        #expect(try await fixture.persistence.load(userID: "0") == good)
        await fixture.store.shutdown(gracePeriod: .seconds(60))
        #expect(await probe.waitForEnd() == [good])
    }

    @Test func concurrentRefreshesShareOneFetch() async throws {
        let fixture = await StoreFixture()
        await fixture.service.holdNext()
        let refreshes = (0..<5).map { _ in Task { try await fixture.store.refresh(userID: "0") } }
        #expect(await withFailsafe { await fixture.service.waitForWaitingCalls(1) }, "the refresh never reached the service")
        await fixture.service.release()
        for refresh in refreshes { _ = try await refresh.value }

        #expect(await fixture.service.calls == ["get 0"])
    }

    @Test func aPersistenceFailureIsThrownNotSwallowed() async throws {
        let fixture = await StoreFixture(persistence: FailingPersistence())
        let probe = StreamProbe(await fixture.store.updates(for: "0"))

        let error = await #expect(throws: PersistenceError.self) { try await fixture.store.refresh(userID: "0") }

        #expect(error?.code == .ioFailure)
        // The server's answer is still the truth subscribers see.
        #expect(await probe.waitFor(count: 1).first?.moments.count == 3)
    }

    /// A refresh whose answer could not be written fails; once the disk works again,
    /// the next refresh writes it, even if the server's answer did not change, and
    /// succeeds only then: a refresh that succeeds leaves persistence holding what it
    /// returned.
    @Test func aFailedWriteIsWrittenByTheNextRefreshThoughNothingChanged() async throws {
        let persistence = FlakyPersistence()
        let fixture = await StoreFixture(persistence: persistence)
        await persistence.fail(true)
        await #expect(throws: PersistenceError.self) { try await fixture.store.refresh(userID: "0") }
        #expect(try await persistence.load(userID: "0") == nil)

        await persistence.fail(false)
        let shown = try await fixture.store.refresh(userID: "0")

        #expect(try await persistence.load(userID: "0") == shown)
    }

    /// A timeline evicted while its writes failed is read back only once they are
    /// written: the store never shows (or later writes over) an older state than it
    /// held.
    @Test func aTimelineEvictedWhileWritesFailedIsReadBackWhole() async throws {
        let persistence = FlakyPersistence()
        let fixture = await StoreFixture(persistence: persistence) { $0.maximumTimelinesInMemory = 1 }
        try await fixture.store.refresh(userID: "0")
        await persistence.fail(true)
        await fixture.service.addUser("2", moments: ["a"])
        _ = try await fixture.service.updateLike(true, momentID: "a", fromUserID: "2")
        await #expect(throws: PersistenceError.self) { try await fixture.store.refresh(userID: "0") }
        await fixture.service.addUser("3", moments: ["x"])
        await #expect(throws: PersistenceError.self) { try await fixture.store.refresh(userID: "3") }  // evicts "0"

        // While the disk still fails, "0" cannot be read back behind memory.
        await #expect(throws: PersistenceError.self) { try await fixture.store.details(for: "0") }
        await persistence.fail(false)
        let shown = try #require(try await fixture.store.details(for: "0"))

        #expect(shown.moment(withID: "a")?.likes?.map(\.id) == ["2"])
        #expect(try await persistence.load(userID: "0") == shown)
    }

    /// Shutting down tries a failed write once more: what memory holds reaches the disk
    /// if it now can.
    @Test func shutdownWritesWhatAFailedWriteLeftOut() async throws {
        let persistence = FlakyPersistence()
        let fixture = await StoreFixture(persistence: persistence)
        await persistence.fail(true)
        await #expect(throws: PersistenceError.self) { try await fixture.store.refresh(userID: "0") }
        let shown = try #require(try await fixture.store.details(for: "0"))

        await persistence.fail(false)
        await fixture.store.shutdown()

        #expect(try await persistence.load(userID: "0") == shown)
    }
}

/// In-memory persistence whose saves fail while `isFailing`.
actor FlakyPersistence: MomentsPersistence {
    private let stored = InMemoryPersistence()
    private var isFailing = false

    func fail(_ failing: Bool) { isFailing = failing }
    func save(_ batch: PersistenceBatch) async throws {
        if isFailing { throw PersistenceError(code: .ioFailure, location: "/full", reason: "no space left on device", underlyingError: FailingPersistence.DiskFull()) }
        try await stored.save(batch)
    }
    func load(userID: String) async throws -> MomentsDetails? { await stored.load(userID: userID) }
    func userIDs(holding momentID: String) async throws -> [String] { await stored.userIDs(holding: momentID) }
    func remove(userID: String) async throws { await stored.remove(userID: userID) }
    func userIDs() async throws -> [String] { await stored.userIDs() }
    func removeAll() async throws { await stored.removeAll() }
    func checkWritable() async throws {}
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
