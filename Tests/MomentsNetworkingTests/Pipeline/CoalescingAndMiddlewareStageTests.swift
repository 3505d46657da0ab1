import Foundation
@testable import MomentsNetworking
import MomentsSupport
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``MiddlewareStage`` and ``CoalescingStage``: authentication adds its credential after
/// every middleware of the caller's, and what is finally sent is noted for the call
/// (its credentials, to redact; its identity, to cache under) and shared only with
/// identical requests of the same identity.
@Suite struct CoalescingAndMiddlewareStageTests {
    private let clock = ManualClock()
    private let names = IdentityHeaderNames(configured: [], authenticationHeader: "Authorization")

    private struct Stamp: HTTPMiddleware {
        func intercept(_ request: HTTPRequest, context: RequestContext, next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
            var request = request
            request.headers["X-Saw-Authorization"] = request.headers["Authorization"] == nil ? "no" : "yes"
            return try await next(request)
        }
        var mayAddCredentials: Bool { false }
    }

    @Test func authenticationComesAfterTheCallersMiddlewaresAndItsSecretIsNoted() async throws {
        let next = StubNext { _, _, _ in StageHarness.reply(200) }
        let authentication = AuthenticationMiddleware(provider: StaticTokenProvider("s3cret-token"))
        let pipeline = CallPipeline([
            MiddlewareStage(configured: [Stamp()], authentication: authentication),
            CoalescingStage(coalescer: SingleFlight(), identityNames: names, identityKey: [1, 2, 3]),
            next,
        ])
        let call = StageHarness.call(clock: clock, keepsIdentity: true)
        _ = try await pipeline.send(StageHarness.request(), call)
        let sent = try #require(next.requests.first)
        #expect(sent.headers["X-Saw-Authorization"] == "no", "no middleware of the caller's sees the credential")
        #expect(sent.headers["Authorization"] == "Bearer s3cret-token")
        #expect(call.record.secrets.redact("echo: s3cret-token") == "echo: <redacted>")
        #expect(call.record.lastIdentity == RequestIdentity(sent.headers, names: names, key: [1, 2, 3]))
    }

    @Test func identicalRequestsShareOneExchangeOnlyWithTheSameIdentity() async throws {
        let gate = Latch()
        let next = StubNext { _, _, _ in
            await gate.wait()
            return StageHarness.reply(200)
        }
        let coalescer = SingleFlight<CoalescingKey, HTTPResponse>()
        let pipeline = CallPipeline([CoalescingStage(coalescer: coalescer, identityNames: names, identityKey: [9]), next])
        func request(_ token: String) -> HTTPRequest {
            var request = StageHarness.request()
            request.headers["Authorization"] = "Bearer \(token)"
            return request
        }
        try await withThrowingTaskGroup(of: Int.self) { group in
            for token in ["a", "a", "a", "b"] {
                group.addTask { try await pipeline.send(request(token), StageHarness.call(clock: clock, coalesces: true)).statusCode }
            }
            // Every caller has joined a flight before any flight may end.
            while coalescer.waitingCallers < 4 { await Task.yield() }
            gate.open()
            for try await status in group { #expect(status == 200) }
        }
        #expect(next.arrivals == 2, "one exchange per identity")
    }
}
