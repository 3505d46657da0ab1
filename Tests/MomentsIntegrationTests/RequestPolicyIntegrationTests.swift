import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability
import MomentsCaching
import MomentsHTTP
import MomentsBFF

private struct Stats: Decodable, Sendable {
    var requests: Int
    var faultsInjected: Int
}

/// First hands out a wrong token; a refresh gives the right one.
private final class RotatingTokens: TokenProvider {
    let refreshes = PThreadMutex(0)
    func currentToken() -> String { "expired-token" }
    func refreshToken(replacing rejected: String) async throws -> String {
        refreshes.withLock { $0 += 1 }
        try await Task.sleep(for: .milliseconds(30))
        return "s3cret"
    }
}

/// Retry, authentication and coalescing against the reference BFF's faults.
@Suite(.serialized) struct RequestPolicyIntegrationTests {
    private func stats(_ bff: ReferenceBFF) async throws -> Stats {
        try await HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()).send(Endpoint<Stats>(.get, "/__stats"))
    }

    @Test func retriesRideOutInjected503s() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 4, initialDelay: .milliseconds(20), jitter: 0)
        }
        try await bff.injectFault(["kind": "status", "status": 503, "retryAfter": "0", "count": 2])

        let details = try await GraphQLMomentsService(client: client).getMoments(userID: "0")

        #expect(details.moments.count == 4)
        #expect(try await stats(bff).requests == 3)
    }

    @Test func aResetLikeMutationIsRetriedBecauseTheBFFMakesItIdempotent() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.retryPolicy = RetryPolicy(initialDelay: .milliseconds(20), jitter: 0)
        }
        try await bff.injectFault(["kind": "reset"])

        let details = try await GraphQLMomentsService(client: client).updateLike(true, momentID: "1", fromUserID: "0")

        #expect(details.moment(withID: "1")?.isLiked == true)
    }

    @Test func a401IsRecoveredByOneRefresh() async throws {
        let bff = try await ReferenceBFF(token: "s3cret")
        defer { bff.stop() }
        let tokens = RotatingTokens()
        let logs = PThreadMutex<[String]>([])
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.authentication = AuthenticationMiddleware(provider: tokens)
            $0.logHandler = { record in logs.withLock { $0.append(record.description) } }
            $0.logLevel = .debug
        }
        let service = GraphQLMomentsService(client: client)

        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 { group.addTask { try await service.getMoments(userID: "0").moments.count } }
            for try await count in group { #expect(count == 4) }
        }

        #expect(tokens.refreshes.withLock { $0 } == 1)
        #expect(!logs.withLock { $0 }.joined().contains("s3cret"))
    }

    @Test func identicalQueriesInFlightReachTheBFFOnce() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let service = GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()))
        try await bff.injectFault(["kind": "slow", "seconds": 0.3])

        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<10 { group.addTask { try await service.getMoments(userID: "0").moments.count } }
            for try await count in group { #expect(count == 4) }
        }

        #expect(try await stats(bff).requests == 1)
    }

    @Test func theStoreCanRefreshFromTheResponseCache() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.cache = MemoryResponseCache() }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())

        let missed = await #expect(throws: HTTPClientError.self) { try await store.refresh(userID: "0", source: .cache) }
        #expect(missed?.code == .cacheMiss)
        let fresh = try await store.refresh(userID: "0")
        bff.stop()
        let cached = try await store.refresh(userID: "0", source: .cache)

        #expect(cached == fresh)
    }
}
