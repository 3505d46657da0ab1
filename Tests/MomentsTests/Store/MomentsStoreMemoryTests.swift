import Foundation
import Moments
import MomentsTestSupport
import Testing
import MomentsTestTraits

@Suite(.ownThread) struct MomentsStoreMemoryTests {
    @Test func memoryHoldsAtMostTheConfiguredNumberOfTimelines() async throws {
        let fixture = await StoreFixture { $0.maximumTimelinesInMemory = 50 }
        for user in 0..<500 {
            await fixture.service.addUser("user-\(user)", moments: ["m\(user)", "shared"])
        }
        for user in 0..<500 {
            try await fixture.store.refresh(userID: "user-\(user)")
            #expect(await fixture.store.timelinesInMemory <= 50)
        }

        // An evicted timeline is reloaded from persistence on demand.
        let first = try await fixture.store.details(for: "user-0")
        #expect(first == (try await fixture.service.serverTimeline("user-0")))
        #expect(await fixture.service.calls.count == 500)
    }

    @Test func timelinesWithSubscribersAreNeverEvicted() async throws {
        let fixture = await StoreFixture { $0.maximumTimelinesInMemory = 10 }
        try await fixture.store.refresh(userID: "0")
        let probe = StreamProbe(await fixture.store.updates(for: "0"))
        await probe.waitFor(count: 1)
        for user in 0..<100 {
            await fixture.service.addUser("u\(user)", moments: ["b"])
            try await fixture.store.refresh(userID: "u\(user)")
        }

        // User 0's timeline is still in memory: a like by u5 on the shared moment b reaches it.
        try await fixture.store.setLike(true, momentID: "b", userID: "u99")
        #expect(await probe.waitUntil { $0.likers("b")?.contains("u99") == true }?.likers("b")?.contains("u99") == true)
    }
}
