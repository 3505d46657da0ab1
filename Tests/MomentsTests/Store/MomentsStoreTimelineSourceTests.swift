import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsBFF

@Suite struct MomentsStoreTimelineSourceTests {
    @Test func refreshPassesItsTimelineSourceToTheService() async throws {
        let answer = Data(SampleAnswers.oddShapes.utf8)
        let transport = StubTransport(statusCode: 200, body: answer)
        let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport) { $0.cache = MemoryResponseCache() }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())

        _ = try await store.refresh(userID: "0")
        _ = try await store.refresh(userID: "0", source: .cacheElseServer)
        _ = try await store.refresh(userID: "0", source: .cache)

        #expect(transport.requests.count == 1)
    }
}
