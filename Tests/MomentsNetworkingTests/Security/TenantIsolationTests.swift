import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsCaching
import MomentsHTTP

/// No answer crosses credentials: not through coalescing, not through the cache.
@Suite struct TenantIsolationTests {
    /// Answers each request with the token it carried, after `release()`.
    final class TokenEchoServer: Sendable {
        final class Gate: Sendable {
            let state = PThreadMutex<(open: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        }

        private let gate = Gate()
        let transport: StubTransport

        init(refusing refused: String? = nil) {
            let gate = self.gate
            transport = StubTransport { request in
                await withCheckedContinuation { continuation in
                    let open = gate.state.withLock { state -> Bool in
                        if !state.open { state.waiting.append(continuation) }
                        return state.open
                    }
                    if open { continuation.resume() }
                }
                let token = request.headers["Authorization"] ?? request.headers["X-Session"] ?? "none"
                if let refused, token.contains(refused) { return jsonResponse(#"{"error":"forbidden"}"#, status: 403) }
                return jsonResponse(#"{"name":"\#(token)","id":1}"#)
            }
        }

        func open() {
            let waiting = gate.state.withLock { state in
                state.open = true
                defer { state.waiting = [] }
                return state.waiting
            }
            waiting.forEach { $0.resume() }
        }

        /// Waits (for what the transport reports) until `count` requests arrived.
        func waitForRequests(_ count: Int) async -> Bool {
            await eventually(timeout: .seconds(30)) { self.transport.requests.count >= count }
        }
    }

    struct SessionHeader: HTTPMiddleware {
        let session: String
        func intercept(_ request: HTTPRequest, context: RequestContext,
                       next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
            var request = request
            request.headers["X-Session"] = session
            return try await next(request)
        }
    }

    @Test func concurrentRequestsWithDifferentTokensAreNotCoalesced() async throws {
        let server = TokenEchoServer()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport)

        async let a = client.send(Endpoint<User>(.get, "/me").header("Authorization", "Bearer TOKEN_A"))
        #expect(await server.waitForRequests(1))
        async let b = client.send(Endpoint<User>(.get, "/me").header("Authorization", "Bearer TOKEN_B"))
        #expect(await server.waitForRequests(2))
        server.open()

        #expect(try await a.name == "Bearer TOKEN_A")
        #expect(try await b.name == "Bearer TOKEN_B")
    }

    @Test func tokensAddedByPerRequestMiddlewaresPartitionToo() async throws {
        let server = TokenEchoServer()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport)

        async let a = client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-a")) })
        #expect(await server.waitForRequests(1))
        async let b = client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-b")) })
        #expect(await server.waitForRequests(2))
        server.open()

        #expect(try await a.name == "session-a")
        #expect(try await b.name == "session-b")
    }

    @Test func identicalRequestsWithTheSameTokenStillShareOneExchange() async throws {
        let server = TokenEchoServer()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport) {
            $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider("TOKEN_A"))
        }

        async let a = client.send(Endpoint<User>(.get, "/me"))
        #expect(await server.waitForRequests(1))
        async let b = client.send(Endpoint<User>(.get, "/me"))
        #expect(await eventually { client.callersOfSharedExchanges == 2 })
        server.open()

        #expect(try await a.name == "Bearer TOKEN_A")
        #expect(try await b.name == "Bearer TOKEN_A")
        #expect(server.transport.requests.count == 1)
    }

    /// Two clients with different tokens on one cache directory; the server allows A
    /// and refuses B.
    @Test(arguments: [CachePolicy.localOrRemote, .remoteThenLocal, .localThenRemote])
    func aSharedDiskCacheNeverServesOneTokensAnswerToAnother(policy: CachePolicy) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = TokenEchoServer(refusing: "TOKEN_B")
        server.open()
        func client(_ token: String) throws -> HTTPClient {
            let cache = try DiskResponseCache(directory: directory.url)
            return HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport) {
                $0.cache = cache
                $0.cachePolicy = policy
                $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(token))
            }
        }

        #expect(try await client("TOKEN_A").send(Endpoint<User>(.get, "/me")).name == "Bearer TOKEN_A")
        let error = await #expect(throws: HTTPClientError.self) {
            try await client("TOKEN_B").send(Endpoint<User>(.get, "/me"))
        }

        #expect(error?.statusCode == 403, "\(String(describing: error))")
        #expect(server.transport.requests.last?.headers["Authorization"] == "Bearer TOKEN_B", "B's request reached the server")
        // The same token in another client still shares the cached answer.
        let again = try await client("TOKEN_A").response(for: Endpoint<User>(.get, "/me").options { $0.cachePolicy = .localOrRemote })
        #expect(again.isFromCache && again.value.name == "Bearer TOKEN_A")
    }

    @Test func aRequestThroughAMiddlewareThatMayAddCredentialsIsNeverCached() async throws {
        let server = TokenEchoServer()
        server.open()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport) {
            $0.cache = MemoryResponseCache()
            $0.cachePolicy = .localOrRemote
        }

        let a = try await client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-a")) })
        let b = try await client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-b")) })

        #expect(a.name == "session-a" && b.name == "session-b")
        #expect(server.transport.requests.count == 2)
    }

    @Test func theDiskCachesKeysNeverHoldTheToken() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let server = TokenEchoServer()
        server.open()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport) {
            $0.cache = try? DiskResponseCache(directory: directory.url)
            $0.cachePolicy = .localOrRemote
            $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider("SECRET123"))
        }
        _ = try await client.send(Endpoint<User>(.get, "/me"))

        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(names.contains { $0.hasSuffix(".response") })
        #expect(!names.contains { $0.contains("SECRET123") })
    }
}
