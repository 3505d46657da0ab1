import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsHTTP

/// A kept-alive connection the server closed fails the first attempt; a request that
/// may be retried gets one more attempt at once, without a retry policy.
@Suite struct StaleConnectionTests {
    private func transport(failures: Int) -> StubTransport {
        let remaining = PThreadMutex(failures)
        return StubTransport { _ in
            let fail = remaining.withLock { count -> Bool in
                defer { count -= 1 }
                return count > 0
            }
            if fail { throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "Connection reset by peer")) }
            return jsonResponse(#"{"data":{"user":{"name":"Ada","id":1}}}"#)
        }
    }

    @Test func aQueryIsRetriedOnceOnAFreshConnection() async throws {
        let stub = transport(failures: 1)
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: stub)
        #expect(try await client.send(UserQuery(variables: .init(id: "1"))).name == "Ada")
        #expect(stub.requests.count == 2)
    }

    @Test func onlyOnceAndNeverForAMutation() async throws {
        let twice = transport(failures: 2)
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: twice)
        await #expect(throws: HTTPClientError.self) { try await client.send(UserQuery(variables: .init(id: "1"))) }
        #expect(twice.requests.count == 2)

        let once = transport(failures: 1)
        let mutations = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: once)
        await #expect(throws: HTTPClientError.self) { try await mutations.send(Endpoint<User>(.post, "/users")) }
        #expect(once.requests.count == 1)
    }
}
