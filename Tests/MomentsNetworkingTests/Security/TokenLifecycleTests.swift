import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsHTTP

/// The provider is asked for every request: a rotated token is used at once; a
/// refreshed token is remembered only while the provider lags behind; `reset()` forgets.
@Suite struct TokenLifecycleTests {
    final class RotatingProvider: TokenProvider {
        let current = PThreadMutex("T1")
        let refreshed = PThreadMutex<String?>(nil)
        func currentToken() -> String { current.withLock { $0 } }
        func refreshToken(replacing rejected: String) throws -> String {
            guard let token = refreshed.withLock({ $0 }) else { throw ValidationError("no refresh") }
            return token
        }
    }

    private func client(_ provider: RotatingProvider, refusing refused: Set<String> = []) -> (HTTPClient, StubTransport) {
        let transport = StubTransport { request in
            let token = String((request.headers["Authorization"] ?? "").dropFirst("Bearer ".count))
            return refused.contains(token) ? jsonResponse("{}", status: 401) : jsonResponse(#"{"name":"\#(token)","id":1}"#)
        }
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: transport) {
            $0.authentication = AuthenticationMiddleware(provider: provider)
        }
        return (client, transport)
    }

    @Test func aRotatedTokenIsUsedByTheNextRequest() async throws {
        let provider = RotatingProvider()
        let (client, _) = client(provider)
        #expect(try await client.send(Endpoint<User>(.get, "/me")).name == "T1")

        provider.current.withLock { $0 = "T2" }

        #expect(try await client.send(Endpoint<User>(.get, "/me")).name == "T2")
    }

    @Test func aRefreshedTokenIsKeptWhileTheProviderLagsAndForgottenOnReset() async throws {
        let provider = RotatingProvider()
        provider.refreshed.withLock { $0 = "T2" }
        let (client, transport) = client(provider, refusing: ["T1"])
        let middleware = try #require(client.configuration.authentication)

        #expect(try await client.send(Endpoint<User>(.get, "/me")).name == "T2") // 401, refresh, retry
        let sent = transport.requests.count
        #expect(try await client.send(Endpoint<User>(.get, "/me")).name == "T2") // no second 401
        #expect(transport.requests.count == sent + 1)

        // Logout: the provider has nothing to refresh with, and the middleware forgets.
        provider.refreshed.withLock { $0 = nil }
        await middleware.reset()
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/me")) }
        #expect(error?.code == .authenticationFailure)
        #expect(transport.requests.last?.headers["Authorization"] == "Bearer T1")
    }
}
