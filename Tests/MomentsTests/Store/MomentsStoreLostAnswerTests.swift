import Foundation
import Moments
import MomentsHTTP
import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsBFF

/// A like whose answer never arrives, against the `MomentsTesting` kit's in-memory BFF
/// behind its fault-injecting transport. When the server may have applied the like
/// (the connection was reset after it read the request, the answer was cut, the call
/// timed out), the call fails and the store asks the server what happened: once idle,
/// store, persistence and stream show the server's state. When nothing reached the
/// server, nothing is asked.
@Suite struct MomentsStoreLostAnswerTests {
    private struct Setup {
        let bff = InMemoryBFF()
        let transport: FaultInjectingTransport
        let persistence = InMemoryPersistence()
        let store: MomentsStore

        init() {
            transport = FaultInjectingTransport(wrapping: bff)
            let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport) { $0.hedging = nil }
            store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
        }
    }

    @Test(arguments: [TransportFault.resetAfterRead, .truncate(keepingBytes: 10)])
    func aLikeTheServerAppliedButNeverAnsweredEndsInTheServersState(fault: TransportFault) async throws {
        let setup = Setup()
        try await setup.store.refresh(userID: "0")
        let probe = StreamProbe(await setup.store.updates(for: "0"))
        // Every attempt: the client sends a like again after a reset (the BFF's like is idempotent).
        setup.transport.inject(fault, times: nil, when: FaultInjectingTransport.operation("updateMomentLike"))

        let error = await #expect(throws: HTTPClientError.self) { try await setup.store.setLike(true, momentID: "1", userID: "0") }
        #expect(error?.transportFailure?.mayHaveReachedServer == true)
        #expect(setup.bff.likers(of: "1") == ["0"], "the server applied the like")

        await setup.store.waitUntilIdle()
        let shown = try #require(try await setup.store.details(for: "0"))
        #expect(shown.moment(withID: "1")?.isLiked == true, "store = server")
        #expect(shown.moment(withID: "1")?.likes?.map(\.id) == ["0"])
        #expect(await setup.persistence.load(userID: "0") == shown, "persistence = store")
        #expect(await probe.waitForAny { $0 == shown } == shown, "the stream reaches it")
    }

    @Test func aLikeThatNeverReachedTheServerIsTakenBackWithoutAskingIt() async throws {
        let setup = Setup()
        try await setup.store.refresh(userID: "0")
        setup.transport.inject(.refuse, when: FaultInjectingTransport.operation("updateMomentLike"))

        let error = await #expect(throws: HTTPClientError.self) { try await setup.store.setLike(true, momentID: "1", userID: "0") }
        #expect(error?.transportFailure?.mayHaveReachedServer == false)
        await setup.store.waitUntilIdle()
        #expect(try await setup.store.details(for: "0")?.moment(withID: "1")?.isLiked == false)
        #expect(setup.bff.likers(of: "1") == [])
        #expect(setup.bff.queryCount == 1, "only the first refresh: nothing to settle")
    }
}
