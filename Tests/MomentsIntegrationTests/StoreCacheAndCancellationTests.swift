import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsBFF

/// The store with a response cache, and a refresh whose callers all give up, against
/// the reference BFF.
@Suite(.serialized) struct StoreCacheAndCancellationTests {
    private func client(_ bff: ReferenceBFF, cache: any ResponseCache) -> HTTPClient {
        HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.cache = cache
            $0.timeout = .seconds(10)
        }
    }

    @Test(arguments: [TimelineSource.cacheElseServer, .cacheThenServer, .serverElseCache])
    func noSourceBringsBackTheStateBeforeAConfirmedLike(source: TimelineSource) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let cache = MemoryResponseCache()
        let client = client(bff, cache: cache)
        let persistence = InMemoryPersistence()
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
        // Users 0 and 1 both hold moment 0; both answers are cached.
        try await store.refresh(userID: "0")
        try await store.refresh(userID: "1")
        #expect(try await store.details(for: "0")?.isLiked("0") == false)

        try await store.setLike(true, momentID: "0", userID: "0")
        let afterZero = try await store.refresh(userID: "0", source: source)
        let afterOne = try await store.refresh(userID: "1", source: source)
        await store.waitUntilIdle()

        #expect(afterZero.isLiked("0") == true)
        #expect(afterOne.likers("0")?.contains("0") == true)
        #expect(await persistence.load(userID: "0")?.isLiked("0") == true)
        #expect(await persistence.load(userID: "1")?.likers("0")?.contains("0") == true)
        // A new store on the same cache, with nothing in memory, sees the like too.
        let fresh = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())
        #expect(try await fresh.refresh(userID: "1", source: source).likers("0")?.contains("0") == true)
    }

    @Test func localThenRemoteShowsTheCachedTimelineThenTheNetworks() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = client(bff, cache: MemoryResponseCache())
        let service = GraphQLMomentsService(client: client)
        let cached = try await MomentsStore(service: service, persistence: InMemoryPersistence()).refresh(userID: "0")
        // The server changes behind the cache's back (another client's like).
        _ = try await GraphQLMomentsService(baseURL: bff.baseURL).updateLike(true, momentID: "1", fromUserID: "0")

        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        let probe = StreamProbe(await store.updates(for: "0"))
        let fresh = try await store.refresh(userID: "0", source: .cacheThenServer)

        #expect(fresh.isLiked("1") == true)
        let values = await probe.waitUntil { $0 == fresh }
        #expect(values == fresh)
        #expect(probe.values == [cached, fresh], "subscribers see the cached timeline, then the network's")
    }

    @Test func aRefreshWhoseOnlyCallerIsCancelledStopsItsFetch() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        // The answer would take ten minutes, longer than the failsafe waits: only the
        // cancellation can end the fetch in time.
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(900) }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())
        try await bff.injectFault(["kind": "slow", "seconds": 600])

        let caller = Task { try await store.refresh(userID: "0") }
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 1) })
        caller.cancel()
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 0) }, "the fetch outlived its only caller")
        await #expect(throws: CancellationError.self) { try await caller.value }

        // A later refresh starts a new fetch instead of joining the abandoned one (which
        // would end it cancelled).
        try await bff.clearFaults()
        let details = try await store.refresh(userID: "0")
        #expect(details.moments.count == 4)
    }

    @Test func aSharedRefreshGoesOnWhileOneCallerRemains() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport())
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())
        try await bff.injectFault(["kind": "slow", "seconds": 0.5])

        let leaving = Task { try await store.refresh(userID: "0") }
        let staying = Task { try await store.refresh(userID: "0") }
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 1) })
        leaving.cancel()

        #expect(try await staying.value.moments.count == 4)
        await #expect(throws: CancellationError.self) { try await leaving.value }
    }
}
