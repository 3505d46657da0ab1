import Foundation
import Moments
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsObservability
import MomentsHTTP
import MomentsBFF

/// Trace context, spans and figures, against the reference BFF: what an operator's
/// tools see of the SDK's work.
@Suite(.serialized) struct ObservabilityTests {
    struct Stats: Decodable {
        let requests: Int
        let lastTraceparent: String?
    }

    static func stats(_ bff: ReferenceBFF) async throws -> Stats {
        try await HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()).send(Endpoint<Stats>(.get, "/__stats"))
    }

    /// A request made under a caller's `traceparent` reaches the server with the same
    /// trace id and a new span id, `tracestate` passed through; spans nest store → service
    /// → HTTP attempt, and the persistence write is the store call's child.
    @Test func aCallersTraceReachesTheServerAndSpansNest() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let tracer = RecordingTracer()
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.tracer = tracer }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence(), configuration: .init { $0.tracer = tracer })
        let incoming = try #require(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=1"))

        try await TraceContext.withValue(incoming) { _ = try await store.refresh(userID: "0") }

        let sent = try #require(TraceContext(traceparent: try await Self.stats(bff).lastTraceparent))
        #expect(sent.traceID == incoming.traceID)
        #expect(sent.spanID != incoming.spanID)
        let spans = tracer.spans
        #expect(spans.map(\.name).sorted() == ["HTTP POST", "moments.persistence.save", "moments.service.get_moments", "moments.store.refresh"])
        let byName = Dictionary(spans.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byName["moments.store.refresh"]?.parent == incoming.spanID)
        #expect(byName["moments.service.get_moments"]?.parent == byName["moments.store.refresh"]?.context.spanID)
        #expect(byName["HTTP POST"]?.parent == byName["moments.service.get_moments"]?.context.spanID)
        #expect(byName["HTTP POST"]?.context.spanID == sent.spanID, "the attempt's span is what the server saw")
        #expect(byName["moments.persistence.save"]?.parent == byName["moments.store.refresh"]?.context.spanID)
        #expect(byName["HTTP POST"]?.attributes["http.response.status_code"] == .int(200))
        #expect(byName["HTTP POST"]?.attributes["http.request.method"] == .string("POST"))
        #expect(spans.allSatisfy { $0.context.traceID == incoming.traceID && $0.ended })

        // Without a context, nothing is traced and no header is sent.
        _ = try await store.refresh(userID: "1")
        #expect(try await Self.stats(bff).lastTraceparent == nil)
        #expect(tracer.spans.count == spans.count)
    }

    /// A scripted run (fetches, likes, an eviction, a failed write, a slow subscriber)
    /// and the Prometheus text scraped after it: each figure with its value.
    @Test func thePrometheusTextCarriesEveryFigureOfAScriptedRun() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let metrics = PrometheusRegistry()
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.metrics = metrics }
        let persistence = FailingOnce()
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence, configuration: .init {
            $0.metrics = metrics
            $0.maximumTimelinesInMemory = 2
            $0.changeBufferSize = 2
        })
        // A consumer of changes that never reads: it falls behind.
        let slow = store.changes()
        var slowIterator = slow.makeAsyncIterator()
        let subscriber = Task { for await _ in await store.updates(for: "0") {} }
        #expect(await eventually { metrics.value(of: "moments.store.subscribers") == 1 })

        for user in ["0", "1", "2", "3"] { try await store.refresh(userID: user) }   // 3 and 2 evict 1 (0 is subscribed)
        try await store.setLike(true, momentID: "1", userID: "0")
        persistence.failNext()
        await #expect(throws: (any Error).self) { try await store.setLike(false, momentID: "1", userID: "0") }
        for _ in 0..<64 { _ = try await store.refresh(userID: "0") }   // enough changes to sample the backlog
        await store.waitUntilIdle()

        let text = metrics.render()
        #expect(text.contains("# TYPE http_client_request_duration_seconds histogram"))
        #expect(metrics.value(of: "http.client.request.duration_seconds", [
            ("http.request.method", "POST"), ("server.address", "127.0.0.1"), ("server.port", String(bff.port)), ("http.response.status_code", "200"),
        ]).map { $0 >= 70 } == true, "\(text)")
        #expect(metrics.value(of: "moments.store.evictions").map { $0 >= 1 } == true)
        #expect(metrics.value(of: "moments.store.timelines") == 2)
        #expect(metrics.value(of: "moments.store.persistence.write.failures") == 1)
        #expect(metrics.value(of: "moments.store.persistence.write.duration_seconds").map { $0 >= 6 } == true)
        #expect(metrics.value(of: "moments.store.changes.gaps") == 1, "the slow consumer fell behind once")
        #expect(metrics.value(of: "moments.store.changes.lag.max") == 2, "its backlog is its whole buffer")
        #expect(metrics.value(of: "moments.http.client.circuit_breaker.state", [("server.address", "127.0.0.1")]) == 0)
        subscriber.cancel()
        #expect(await eventually { metrics.value(of: "moments.store.subscribers") == 0 })
        _ = await slowIterator.next()
    }
}

/// Spans as a tracing backend would receive them.
final class RecordingTracer: MomentsTracer {
    struct Recorded: Sendable {
        let name: String
        let context: TraceContext
        let parent: String
        var attributes: [String: MomentsObservability.SpanAttribute] = [:]
        var ended = false
    }

    private let recorded = PThreadMutex<[Recorded]>([])
    var spans: [Recorded] { recorded.withLock { $0 } }

    func startSpan(_ name: String, kind: MomentsObservability.SpanKind, context: TraceContext, parent: TraceContext) -> any MomentsSpan {
        let index = recorded.withLock { all in
            all.append(Recorded(name: name, context: context, parent: parent.spanID))
            return all.count - 1
        }
        return Span(tracer: self, index: index)
    }

    private struct Span: MomentsSpan {
        let tracer: RecordingTracer
        let index: Int
        func setAttribute(_ key: String, _ value: MomentsObservability.SpanAttribute) { tracer.recorded.withLock { $0[index].attributes[key] = value } }
        func recordError(_ error: any Error) { setAttribute("error", .string("\(error)")) }
        func end() { tracer.recorded.withLock { $0[index].ended = true } }
    }
}

/// In-memory persistence whose next save fails once when told.
final class FailingOnce: MomentsPersistence {
    struct Refused: Error {}
    private let inner = InMemoryPersistence()
    private let failing = PThreadMutex(false)

    func failNext() { failing.withLock { $0 = true } }

    func load(userID: String) async throws -> MomentsDetails? { await inner.load(userID: userID) }
    func save(_ batch: PersistenceBatch) async throws {
        if failing.withLock({ state in defer { state = false }; return state }) { throw Refused() }
        try await inner.save(batch)
    }
    func userIDs(holding momentID: String) async throws -> [String] { await inner.userIDs(holding: momentID) }
    func remove(userID: String) async throws { await inner.remove(userID: userID) }
    func userIDs() async throws -> [String] { await inner.userIDs() }
    func removeAll() async throws { await inner.removeAll() }
    func checkWritable() async throws {}
}
