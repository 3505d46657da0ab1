import Foundation
import Moments
import MomentsTestSupport
import MomentsTesting
import Testing

/// `MomentsStore.shutdown(gracePeriod:)` and `run()`: new calls refused with a typed error,
/// calls in flight let finish within the grace period, streams ended after their last
/// value, writes finished, persistence closed.
@Suite struct MomentsStoreShutdownTests {
    /// Every value of `stream` until it ends.
    private func collect(_ stream: AsyncStream<MomentsDetails>) -> Task<[MomentsDetails], Never> {
        Task {
            var values: [MomentsDetails] = []
            for await value in stream { values.append(value) }
            return values
        }
    }

    private func isShutDown(_ error: any Error) -> Bool {
        (error as? MomentsStoreError)?.code == .shutDown
    }

    /// A store on a manual clock, user 0's timeline loaded, and user 0's like of "c" held
    /// at the service.
    private func storeWithAHeldLike() async throws
        -> (ManualClock, InMemoryPersistence, StoreFixture, Task<MomentsDetails, any Error>) {
        let clock = ManualClock()
        let persistence = InMemoryPersistence()
        let fixture = await StoreFixture(persistence: persistence) { $0.clock = clock }
        let store = fixture.store
        try await store.refresh(userID: "0")
        await fixture.service.holdNext()
        let like = Task { try await store.setLike(true, momentID: "c", userID: "0") }
        await fixture.service.waitForWaitingCalls(1)
        return (clock, persistence, fixture, like)
    }

    @Test func aCallInFlightFinishesAndIsPersistedNewCallsAreRefusedAndStreamsEndWithTheLastState() async throws {
        let (clock, persistence, fixture, like) = try await storeWithAHeldLike()
        let store = fixture.store
        let updates = collect(await store.updates(for: "0"))
        let feed = StreamProbe(store.changes())
        let shutdown = Task { await store.shutdown(gracePeriod: .seconds(30)) }
        // The grace period's wake-up is armed once the shutdown waits for the like.
        await clock.waitForWakeUps(1)

        await #expect(throws: MomentsStoreError.self) { try await store.refresh(userID: "0") }
        let refused = await Result(awaiting: { try await store.setLike(true, momentID: "a", userID: "0") })
        #expect(refused.error.map(isShutDown) == true, "\(refused)")
        let details = await Result(awaiting: { try await store.details(for: "0") })
        #expect(details.error.map(isShutDown) == true)

        await fixture.service.release()
        let liked = try await like.value
        await shutdown.value
        #expect(liked.isLiked("c") == true)
        #expect(clock.pendingWakeUps == 0, "the grace period's wake-up is cancelled")

        // Every stream ended, the last value first.
        let values = await updates.value
        #expect(values.last?.isLiked("c") == true)
        let changes = await feed.waitFor(count: 1)
        #expect(!changes.isEmpty)
        for await _ in store.changes() { Issue.record("a new change stream of a shut-down store must end at once") }
        var late: [MomentsDetails] = []
        for await value in await store.updates(for: "0") { late.append(value) }
        #expect(late.map { $0.isLiked("c") } == [true], "a new subscriber gets the last state, then the end")

        // The confirmed like was written before the shutdown returned.
        #expect(await persistence.load(userID: "0")?.isLiked("c") == true)
    }

    @Test func aCallStillInFlightWhenTheGracePeriodEndsPersistsNothingAndFailsTyped() async throws {
        let (clock, persistence, fixture, like) = try await storeWithAHeldLike()
        let store = fixture.store
        let shutdown = Task { await store.shutdown(gracePeriod: .seconds(5)) }
        await clock.waitForWakeUps(1)

        clock.advance(by: .seconds(5))
        await shutdown.value  // returns with the like still at the server

        await fixture.service.release()
        let outcome = await Result(awaiting: { try await like.value })
        #expect(outcome.error.map(isShutDown) == true, "\(outcome)")
        #expect(await persistence.load(userID: "0")?.isLiked("c") == false, "nothing is written after the shutdown")
    }

    @Test func concurrentAndRepeatedShutdownsAllReturnOnceItIsDone() async throws {
        let clock = ManualClock()
        let fixture = await StoreFixture { $0.clock = clock }
        let store = fixture.store
        try await store.refresh(userID: "0")
        await fixture.service.holdNext()
        let refresh = Task { try await store.refresh(userID: "0") }
        await fixture.service.waitForWaitingCalls(1)

        let finished = Locked(0)
        let shutdowns = (0..<5).map { _ in Task { await store.shutdown(); finished.update { $0 += 1 } } }
        await clock.waitForWakeUps(1)
        #expect(finished.value == 0, "no shutdown returns while a call is in flight within the grace period")

        await fixture.service.release()
        for shutdown in shutdowns { await shutdown.value }
        _ = try await refresh.value
        #expect(finished.value == 5)
        await store.shutdown()  // once more, after the end: returns at once
    }

    @Test func runReturnsOnceItsTaskIsCancelledHavingShutTheStoreDown() async throws {
        let persistence = InMemoryPersistence()
        let fixture = await StoreFixture(persistence: persistence)
        let store = fixture.store
        let run = Task { try await store.run() }
        try await store.refresh(userID: "0")
        let updates = collect(await store.updates(for: "0"))

        run.cancel()
        try await run.value
        #expect(await updates.value.count == 1)
        await #expect(throws: MomentsStoreError.self) { try await store.refresh(userID: "0") }
    }

    @Test func runReturnsWhenAnotherTaskShutsTheStoreDown() async throws {
        let fixture = await StoreFixture()
        let store = fixture.store
        let run = Task { try await store.run() }
        try await store.refresh(userID: "0")
        await store.shutdown()
        try await run.value
    }

    @Test func aStoreShutDownBeforeRunStartsMakesRunReturnAtOnce() async throws {
        let fixture = await StoreFixture()
        await fixture.store.shutdown()
        try await fixture.store.run()
    }
}
