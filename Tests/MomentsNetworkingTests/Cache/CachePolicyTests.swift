import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsTesting
import MomentsGraphQL
import MomentsCaching
import MomentsHTTP

private typealias Query = UserQuery

private struct Mutation: GraphQLOperation {
    typealias Response = User
    struct Variables: Encodable, Sendable { var id: String }
    struct ResponseData: Decodable, Sendable { var rename: User }
    static let document = "mutation rename($id: ID!) { rename(id: $id) { id name } }"
    static let operationName = "rename"
    static let isMutation = true
    var variables: Variables
    func extract(_ data: ResponseData) -> User { data.rename }
}

@Suite struct CachePolicyTests {
    /// Answers "Ada #<call>" so a test can tell which exchange a value came from.
    private func numbered(failing: Set<Int> = []) -> ScriptedTransport {
        ScriptedTransport { call, _ in
            if failing.contains(call) { throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionRefused, message: "down")) }
            return ok(#"{"id":\#(call),"name":"Ada #\#(call)"}"#)
        }
    }

    /// The clock the tests' clients read: time passes when a test says so.
    private let clock = ManualClock()

    private func client(_ transport: any HTTPTransport, cache: any ResponseCache = MemoryResponseCache(), ttl: Duration = .seconds(60)) -> HTTPClient {
        testClient(transport) { [clock] in
            $0.cache = cache
            $0.cacheTTL = ttl
            $0.clock = clock
        }
    }

    @Test func remoteAlwaysSendsAndStoresTheAnswer() async throws {
        let transport = numbered()
        let client = client(transport)

        #expect(try await client.send(Endpoint<User>(.get, "/u")).id == 1)
        #expect(try await client.send(Endpoint<User>(.get, "/u")).id == 2)
        let cached = try await client.response(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local })
        #expect(cached.value.id == 2)
        #expect(cached.isFromCache)
        #expect(transport.calls == 2)
    }

    @Test func localNeverSendsAndAMissIsTyped() async throws {
        let transport = numbered()
        let client = client(transport)

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local }) }

        #expect(error?.code == .cacheMiss)
        #expect(transport.calls == 0)
    }

    /// A client with no cache: `.local` is a typed miss that sends nothing, every other
    /// policy is the network's answer (or its failure), as with an empty cache.
    @Test(arguments: [CachePolicy.remote, .local, .localOrRemote, .localThenRemote, .remoteThenLocal])
    func withoutACacheEveryPolicyButLocalIsTheNetworks(_ policy: CachePolicy) async throws {
        let transport = numbered(failing: [2])
        let client = testClient(transport) { [clock] in $0.clock = clock }
        let request = Endpoint<User>(.get, "/u").options { $0.cachePolicy = policy }
        if policy == .local {
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(request) }
            #expect(error?.code == .cacheMiss)
            #expect(transport.calls == 0)
            return
        }
        let answer = try await client.response(for: request)
        #expect(answer.value.id == 1)
        #expect(!answer.isFromCache)
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(request) }
        #expect(error?.code == .transportFailure, "nothing cached to fall back on")
        #expect(transport.calls == 2)
    }

    @Test func localTreatsAnExpiredEntryAsAMiss() async throws {
        let transport = numbered()
        let client = client(transport, ttl: .milliseconds(50))
        _ = try await client.send(Endpoint<User>(.get, "/u"))
        clock.advance(by: .milliseconds(80))

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local }) }

        #expect(error?.code == .cacheMiss)
    }

    @Test func localOrRemoteUsesAFreshEntryElseTheNetwork() async throws {
        let transport = numbered()
        let client = client(transport)
        let request = Endpoint<User>(.get, "/u").options { $0.cachePolicy = .localOrRemote; $0.cacheTTL = .milliseconds(80) }

        #expect(try await client.send(request).id == 1)
        #expect(try await client.send(request).id == 1)
        clock.advance(by: .milliseconds(120))
        #expect(try await client.send(request).id == 2, "a per-request TTL expires the entry")
        #expect(transport.calls == 2)
    }

    @Test func localThenRemoteDeliversTheCachedValueThenTheFreshOne() async throws {
        let transport = numbered()
        let client = client(transport)
        _ = try await client.send(Endpoint<User>(.get, "/u"))

        var received: [(Int, Bool)] = []
        for try await response in client.responses(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = .localThenRemote }) {
            received.append((response.value.id, response.isFromCache))
        }

        #expect(received.map(\.0) == [1, 2])
        #expect(received.map(\.1) == [true, false])
        #expect(try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local }).id == 2, "the fresh answer replaced the cached one")
    }

    @Test func localThenRemoteWithAnEmptyCacheDeliversOnlyTheNetworkValue() async throws {
        let client = client(numbered())
        var ids: [Int] = []
        for try await response in client.responses(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = .localThenRemote }) { ids.append(response.value.id) }
        #expect(ids == [1])
    }

    @Test(arguments: [
        (CachePolicy.remote, [2], [false]),
        (CachePolicy.local, [1], [true]),
        (CachePolicy.localOrRemote, [1], [true]),
        (CachePolicy.localThenRemote, [1, 2], [true, false]),
        (CachePolicy.remoteThenLocal, [2], [false]),
    ])
    func responsesHonourTheRequestsPolicy(policy: CachePolicy, ids: [Int], fromCache: [Bool]) async throws {
        let client = client(numbered())
        _ = try await client.send(Endpoint<User>(.get, "/u"))

        var received: [(Int, Bool)] = []
        for try await response in client.responses(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = policy }) {
            received.append((response.value.id, response.isFromCache))
        }

        #expect(received.map(\.0) == ids)
        #expect(received.map(\.1) == fromCache)
    }

    @Test func sendWithLocalThenRemoteReturnsTheCachedValueAndRefreshesBehind() async throws {
        let transport = numbered()
        let client = client(transport)
        _ = try await client.send(Endpoint<User>(.get, "/u"))

        let first = try await client.response(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = .localThenRemote })

        #expect(first.value.id == 1 && first.isFromCache)
        await transport.waitForCalls(2)
        #expect(await eventually { (try? await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local }))?.id == 2 })
    }

    @Test func remoteThenLocalFallsBackToTheCacheEvenExpired() async throws {
        let transport = numbered(failing: [2, 3])
        let client = client(transport, ttl: .milliseconds(10))
        _ = try await client.send(Endpoint<User>(.get, "/u"))
        clock.advance(by: .milliseconds(30))

        let fallback = try await client.response(for: Endpoint<User>(.get, "/u").options { $0.cachePolicy = .remoteThenLocal })
        #expect(fallback.value.id == 1 && fallback.isFromCache)

        let nothing = await #expect(throws: HTTPClientError.self) {
            try await client.send(Endpoint<User>(.get, "/other").options { $0.cachePolicy = .remoteThenLocal })
        }
        #expect(nothing?.code == .transportFailure)
    }

    /// `.remoteThenLocal` answers from the cache only when no answer came or the server
    /// said it could not answer now; an answer about the caller or the resource stands.
    @Test(arguments: [
        (401, false), (403, false), (404, false), (410, false), (400, false), (422, false),
        (408, true), (429, true), (500, true), (502, true), (503, true), (504, true),
    ])
    func remoteThenLocalFallsBackOnlyWhenTheServerCouldNotAnswer(code: Int, fallsBack: Bool) async throws {
        for body in ["", #"{"errors":[{"message":"refused"}]}"#] {
            let transport = ScriptedTransport { call, _ in
                call == 1 ? ok(#"{"data":{"user":{"id":1,"name":"Ada"}}}"#) : HTTPResponse(statusCode: code, body: Data(body.utf8))
            }
            let client = client(transport)
            _ = try await client.send(Query(variables: .init(id: "1")))
            let request = Query(variables: .init(id: "1"), cachePolicy: .remoteThenLocal)
            if fallsBack {
                let answer = try await client.response(for: request)
                #expect(answer.isFromCache && answer.value.name == "Ada", "\(code) \(body)")
            } else {
                let error = await #expect(throws: HTTPClientError.self, "\(code) \(body)") { try await client.send(request) }
                #expect(error?.statusCode == code)
            }
        }
    }

    @Test func remoteThenLocalDoesNotPaperOverAnUndecodableAnswer() async throws {
        let transport = ScriptedTransport { call, _ in call == 1 ? ok() : ok("<html>gateway</html>") }
        let client = client(transport)
        _ = try await client.send(Endpoint<User>(.get, "/u"))
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .remoteThenLocal }) }
        #expect(error?.code == .decodingFailure)
    }

    @Test func remoteThenLocalRespectsTheMaximumStaleness() async throws {
        let transport = numbered(failing: [2])
        let client = testClient(transport) { [clock] in
            $0.cache = MemoryResponseCache()
            $0.maximumStaleness = .zero
            $0.clock = clock
        }
        _ = try await client.send(Endpoint<User>(.get, "/u"))
        clock.advance(by: .milliseconds(20))

        await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .remoteThenLocal }) }
    }

    @Test func failureStatusesAreNeverCached() async throws {
        let transport = ScriptedTransport { _, _ in status(500) }
        let cache = MemoryResponseCache()
        let client = client(transport, cache: cache)

        await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u")) }

        #expect(cache.count == 0)
    }

    @Test func graphQLQueriesAreCachedByBodyAndErrorsAndMutationsNever() async throws {
        let transport = ScriptedTransport { call, request in
            let body = String(decoding: request.body ?? Data(), as: UTF8.self)
            if body.contains(#""id":"bad""#) { return ok(#"{"errors":[{"message":"no"}],"data":null}"#) }
            let field = body.contains("rename") ? "rename" : "user"
            return ok(#"{"data":{"\#(field)":{"id":\#(call),"name":"Ada"}}}"#)
        }
        let cache = MemoryResponseCache()
        let client = client(transport, cache: cache)

        _ = try await client.send(Query(variables: .init(id: "1")))
        _ = try await client.send(Query(variables: .init(id: "2")))
        #expect(cache.count == 2, "different variables, different entries")
        for _ in 0..<20 {
            #expect(try await client.send(Query(variables: .init(id: "1"), cachePolicy: .local)).id == 1)
        }

        await #expect(throws: HTTPClientError.self) { try await client.send(Query(variables: .init(id: "bad"))) }
        _ = try await client.send(Mutation(variables: .init(id: "1")))
        #expect(cache.count == 2)
    }

    @Test func theCacheKeyIsStable() throws {
        let request = HTTPRequest(method: .post, url: URL(string: "https://bff.example.com/graphql")!, body: Data("{}".utf8))
        #expect(CacheKey(request) == CacheKey(request))
        #expect(CacheKey(request).rawValue == SHA256Vector.expected)
        var other = request
        other.body = Data("{ }".utf8)
        #expect(CacheKey(other) != CacheKey(request))
    }

    @Test func clearEmptiesTheCache() async throws {
        let cache = MemoryResponseCache()
        let client = client(numbered(), cache: cache)
        _ = try await client.send(Endpoint<User>(.get, "/u"))

        cache.clear()

        await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u").options { $0.cachePolicy = .local }) }
    }
}

/// SHA-256 of "POST\nhttps://bff.example.com/graphql\n{}", computed independently (Python hashlib).
enum SHA256Vector {
    static let expected = "0eb5a0ec4fb14f226fe6de115e34f0bd07c10578f52adcb72fb57e64ee4bcba5"
}
