import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsObservability
import MomentsHTTP

/// What every attempt of a call (retries and hedges included) sends of the caller's
/// W3C trace context.
@Suite struct TraceHeaderTests {
    static let trace = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let parent = "00f067aa0ba902b7"

    /// Every attempt carries the caller's trace under a span of its own, `tracestate`
    /// unchanged: two retries here.
    @Test func everyRetryCarriesTheTraceUnderANewSpan() async throws {
        let transport = ScriptedTransport { call, _ in call < 3 ? status(503) : ok() }
        let client = testClient(transport) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), jitter: 0, sleep: SleepRecorder().sleep)
        }
        let incoming = try #require(TraceContext(traceparent: "00-\(Self.trace)-\(Self.parent)-01", tracestate: "vendor=1"))
        _ = try await TraceContext.withValue(incoming) { try await client.send(Endpoint<User>(.get, "/u")) }
        try expectOneTraceWithDistinctSpans(transport.requests, count: 3, under: incoming)
    }

    /// A hedge is an attempt too: the stalled first attempt and the hedge that wins each
    /// have their own span of the caller's trace.
    @Test func aHedgeCarriesTheTraceUnderANewSpan() async throws {
        let transport = ScriptedTransport { call, _ in
            if call == 1 { await waitUntilCancelled(); throw HTTPClientError.cancelled() }
            return ok()
        }
        let client = testClient(transport) {
            $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(20)))
            $0.coalescesRequests = false
        }
        let incoming = try #require(TraceContext(traceparent: "00-\(Self.trace)-\(Self.parent)-00", tracestate: "vendor=1"))
        _ = try await TraceContext.withValue(incoming) { try await client.send(HedgedGetUser()) }
        try expectOneTraceWithDistinctSpans(transport.requests, count: 2, under: incoming)
        #expect(transport.requests.allSatisfy { $0.headers["traceparent"]?.hasSuffix("-00") == true }, "an unsampled trace stays unsampled")
    }

    /// Without a context the SDK sends no trace headers.
    @Test func withoutAContextNoTraceHeaderIsSent() async throws {
        let transport = ScriptedTransport { _, _ in ok() }
        _ = try await testClient(transport).send(Endpoint<User>(.get, "/u"))
        #expect(transport.requests.first?.headers["traceparent"] == nil)
        #expect(transport.requests.first?.headers["tracestate"] == nil)
    }

    private func expectOneTraceWithDistinctSpans(_ requests: [HTTPRequest], count: Int, under incoming: TraceContext) throws {
        #expect(requests.count == count)
        let sent = try requests.map { try #require(TraceContext(traceparent: $0.headers["traceparent"], tracestate: $0.headers["tracestate"])) }
        #expect(sent.allSatisfy { $0.traceID == incoming.traceID && $0.tracestate == incoming.tracestate })
        #expect(Set(sent.map(\.spanID)).count == count, "each attempt has its own span")
        #expect(!sent.contains { $0.spanID == incoming.spanID }, "no attempt reuses the caller's span")
    }
}

private struct HedgedGetUser: Request {
    typealias Response = User
    var path: String { "/users/1" }
    var options: RequestOptions { RequestOptions(hedges: true) }
}
