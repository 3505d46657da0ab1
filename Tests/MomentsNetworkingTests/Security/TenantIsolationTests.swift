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
            struct State {
                var open = false
                /// The requests held until the gate opens.
                var waiting: [CheckedContinuation<Void, Never>] = []
                /// Who waits for that many requests to be held.
                var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

                /// The watchers whose count of held requests is reached.
                mutating func satisfiedWatchers() -> [CheckedContinuation<Void, Never>] {
                    let ready = watchers.filter { $0.count <= waiting.count }.map(\.continuation)
                    watchers.removeAll { $0.count <= waiting.count }
                    return ready
                }
            }
            let state = PThreadMutex(State())
        }

        private let gate = Gate()
        let transport: StubTransport

        init(refusing refused: String? = nil) {
            let gate = self.gate
            transport = StubTransport { request in
                await withCheckedContinuation { continuation in
                    let (open, ready) = gate.state.withLock { state -> (Bool, [CheckedContinuation<Void, Never>]) in
                        guard !state.open else { return (true, []) }
                        state.waiting.append(continuation)
                        return (false, state.satisfiedWatchers())
                    }
                    if open { continuation.resume() }
                    for watcher in ready { watcher.resume() }
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

        /// Returns once `count` requests are held at the closed gate.
        func waitForRequests(_ count: Int) async {
            await withCheckedContinuation { continuation in
                let reached = gate.state.withLock { state -> Bool in
                    guard state.waiting.count < count else { return true }
                    state.watchers.append((count, continuation))
                    return false
                }
                if reached { continuation.resume() }
            }
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
        #expect(await withFailsafe { await server.waitForRequests(1) }, "the first request never reached the server")
        async let b = client.send(Endpoint<User>(.get, "/me").header("Authorization", "Bearer TOKEN_B"))
        #expect(await withFailsafe { await server.waitForRequests(2) }, "the second request never reached the server")
        server.open()

        #expect(try await a.name == "Bearer TOKEN_A")
        #expect(try await b.name == "Bearer TOKEN_B")
    }

    @Test func tokensAddedByPerRequestMiddlewaresPartitionToo() async throws {
        let server = TokenEchoServer()
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: server.transport)

        async let a = client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-a")) })
        #expect(await withFailsafe { await server.waitForRequests(1) }, "the first request never reached the server")
        async let b = client.send(Endpoint<User>(.get, "/me").options { $0.middlewares.append(SessionHeader(session: "session-b")) })
        #expect(await withFailsafe { await server.waitForRequests(2) }, "the second request never reached the server")
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
        #expect(await withFailsafe { await server.waitForRequests(1) }, "the first request never reached the server")
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
