import Foundation
import Moments
import MomentsTestSupport
import Testing
import MomentsTesting

@Suite struct MomentsStoreLikeTests {
    @Test func aLikeIsEmittedAtOnceThenConfirmedAndPersisted() async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        await probe.waitFor(count: 1)
        await fixture.service.holdNext()

        let like = Task { try await fixture.store.setLike(true, momentID: "b", userID: "0") }

        let optimistic = await probe.waitFor(count: 2).last
        #expect(optimistic?.isLiked("b") == true)
        #expect(optimistic?.likers("b") == ["1", "0"])
        #expect(try await fixture.persistence.load(userID: "0")?.isLiked("b") == false, "only confirmed state is persisted")

        await fixture.service.release()
        let answer = try await like.value

        #expect(answer == (try await fixture.service.serverTimeline("0")))
        // The answer holds what the optimistic value showed: no new value is needed.
        #expect(await probe.waitUntil { $0 == answer } == answer)
        #expect(try await fixture.persistence.load(userID: "0") == answer)
    }

    /// A like's answer is computed after the like took effect: for its liker's `isLiked`
    /// of that moment it is the authority against every answer not certainly computed
    /// after it. A like held before it left, overtaken by a like of another moment
    /// computed first, still returns, shows, persists and streams its own state.
    @Test(arguments: [false, true])
    func aLikeOvertakenByAnotherLikesAnswerStillShowsItsOwnState(unlike: Bool) async throws {
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["m0", "m1"], likedBy: unlike ? ["m0": ["0"]] : [:])
        let persistence = InMemoryPersistence()
        let store = MomentsStore(service: service, persistence: persistence)
        try await store.refresh(userID: "0")
        let probe = StreamProbe(await store.updates(for: "0"))
        await service.holdNext(1)
        async let held = store.setLike(!unlike, momentID: "m0", userID: "0")
        await service.waitForWaitingCalls(1)
        let overtaking = try await store.setLike(true, momentID: "m1", userID: "0")
        #expect(overtaking.moment(withID: "m1")?.isLiked == true)
        await service.release()
        let answered = try await held
        #expect(answered.moment(withID: "m0")?.isLiked == !unlike, "the call returns its own state")
        #expect(answered.moment(withID: "m0")?.likes?.contains { $0.id == "0" } == !unlike)
        let shown = try #require(try await store.details(for: "0"))
        #expect(shown == (try await service.serverTimeline("0")), "store = server")
        #expect(await persistence.load(userID: "0") == shown, "file = store")
        #expect(await probe.waitForAny { $0 == shown } == shown, "the stream reaches it")
    }

    @Test func anUnlikeRemovesTheUser() async throws {
        let fixture = await StoreFixture()
        await fixture.service.addUser("1", moments: ["b"])
        try await fixture.store.refresh(userID: "1")

        let answer = try await fixture.store.setLike(false, momentID: "b", userID: "1")

        #expect(answer.isLiked("b") == false)
        #expect(answer.likers("b") == [])
    }

    @Test func aFailedLikeIsRolledBackEmittedAndThrown() async throws {
        let fixture = await StoreFixture()
        let before = try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        await probe.waitFor(count: 1)
        await fixture.service.failNext(message: "mutation refused")

        let error = await #expect(throws: FakeMomentsService.InjectedFailure.self) {
            try await fixture.store.setLike(true, momentID: "a", userID: "0")
        }

        #expect(error?.message == "mutation refused")
        let values = await probe.waitFor(count: 3)
        #expect(values.map { $0.isLiked("a") } == [false, true, false])
        #expect(values.last == before)
        #expect(try await fixture.persistence.load(userID: "0") == before)
    }

    @Test(arguments: [[true, false, true], [true, false], [false, true, true, false], [true, true, false, false, true]])
    func concurrentLikesEndInTheStateOfTheLastCall(calls: [Bool]) async throws {
        let fixture = await StoreFixture()
        try await fixture.store.refresh(userID: "0")
        await fixture.service.holdNext(calls.count)

        var tasks: [Task<MomentsDetails, any Error>] = []
        for (index, isLiked) in calls.enumerated() {
            tasks.append(Task { try await fixture.store.setLike(isLiked, momentID: "a", userID: "0") })
            // Each call starts before the next (call order), while none is answered.
            #expect(await eventually { await fixture.store.likeCallsInFlight(for: "0") == index + 1 })
            #expect(await eventually { (try? await fixture.store.details(for: "0"))??.isLiked("a") == isLiked })
        }
        // The likes are sent one after another, in call order: each is let through once
        // the service holds it.
        for _ in calls {
            #expect(await withFailsafe { await fixture.service.waitForWaitingCalls(1) }, "a like never reached the service")
            await fixture.service.release()
        }
        for task in tasks { _ = try await task.value }
        await fixture.store.waitUntilIdle()
        #expect(await fixture.service.calls.count == calls.count + 1, "the first refresh and each like, once")

        let last = try #require(calls.last as Bool?)
        #expect(try await fixture.service.serverTimeline("0").isLiked("a") == last)
        #expect(try await fixture.store.details(for: "0")?.isLiked("a") == last)
        #expect(try await fixture.persistence.load(userID: "0")?.isLiked("a") == last)
        #expect(await fixture.service.calls.dropFirst().map { $0.hasPrefix("like \(true)") } == calls)
    }

    @Test func aConfirmedLikeUpdatesTheMomentInEveryCachedTimeline() async throws {
        let fixture = await StoreFixture()
        await fixture.service.addUser("7", moments: ["x", "b"])
        try await fixture.store.refresh(userID: "0")
        try await fixture.store.refresh(userID: "7")
        let seven = StreamProbe(await fixture.store.updates(for: "7"))
        await seven.waitFor(count: 1)

        try await fixture.store.setLike(true, momentID: "b", userID: "0")

        let updated = await seven.waitUntil { $0.likers("b") == ["1", "0"] }
        #expect(updated?.likers("b") == ["1", "0"])
        #expect(updated?.isLiked("b") == false, "isLiked stays relative to user 7")
        #expect(try await fixture.persistence.load(userID: "7")?.likers("b") == ["1", "0"])
    }

    @Test func aLikeForATimelineNotYetLoadedIsSentAndApplied() async throws {
        let fixture = await StoreFixture()

        let answer = try await fixture.store.setLike(true, momentID: "c", userID: "0")

        #expect(answer.isLiked("c") == true)
        #expect(try await fixture.store.details(for: "0") == answer)
    }

    /// A timeline's age is how long ago the server last answered for it; unknown for one
    /// read from persistence; it grows while refreshes fail.
    /// The store reads the time from its configuration's clock: on a clock that stands
    /// still, a timeline's age is what the test moved it by, exactly.
    @Test func aTimelinesAgeIsReadFromTheStoresClock() async throws {
        let clock = ManualClock()
        let fixture = await StoreFixture { $0.clock = clock }
        try await fixture.store.refresh(userID: "0")
        #expect(await fixture.store.timelineAge(for: "0") == .zero)
        clock.advance(by: .seconds(5))
        #expect(await fixture.store.timelineAge(for: "0") == .seconds(5))
    }

    @Test func aTimelinesAgeSaysHowLongAgoTheServerLastAnswered() async throws {
        let fixture = await StoreFixture()
        #expect(await fixture.store.timelineAge(for: "0") == nil)
        try await fixture.store.refresh(userID: "0")
        let fresh = try #require(await fixture.store.timelineAge(for: "0"))
        await fixture.service.failNext(message: "down")
        _ = try? await fixture.store.refresh(userID: "0")
        let later = try #require(await fixture.store.timelineAge(for: "0"))
        #expect(later >= fresh, "a failed refresh leaves the age growing")
        let reloaded = MomentsStore(service: fixture.service, persistence: fixture.persistence)
        _ = try await reloaded.details(for: "0")
        #expect(await reloaded.timelineAge(for: "0") == nil, "read from persistence: of unknown age")
    }
}
