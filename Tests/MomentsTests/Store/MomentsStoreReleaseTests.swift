import Foundation
import Moments
import MomentsTestSupport
import Testing

/// A store that is released ends its streams: a subscriber is never left waiting on a
/// store nobody holds.
@Suite struct MomentsStoreReleaseTests {
    @Test func releasingTheStoreEndsItsUpdatesAndChangeStreams() async throws {
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["a", "b"])
        var store: MomentsStore? = MomentsStore(service: service, persistence: InMemoryPersistence())
        try await store?.refresh(userID: "0")
        let updates = try #require(await store?.updates(for: "0"))
        let changes = try #require(store?.changes())
        weak let released = store
        let updatesEnded = Task { await updates.reduce(0) { count, _ in count + 1 } }
        let changesEnded = Task { await changes.reduce(0) { count, _ in count + 1 } }

        store = nil

        #expect(released == nil, "nothing else holds the store")
        #expect(await updatesEnded.value == 1, "the timeline, then the end")
        #expect(await changesEnded.value == 0)
    }
}
