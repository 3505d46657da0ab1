import Foundation
import Moments
import MomentsNetworking
import MomentsSupport
import MomentsObservability
import MomentsBFF

/// What tracing and metrics cost a call: `getMoments` against nginx with a tracer (which
/// keeps every span, as an exporter's buffer would), a Prometheus registry and a current
/// trace context, beside the same client with none of them.
enum ObservabilityBenchmark {
    static func run() async throws -> [Row] {
        let server = try NginxServer(answer: BenchmarkData.envelope(BenchmarkData.timeline(moments: 4)))
        defer { server.stop() }
        let tracer = KeepingTracer()
        let observed = GraphQLMomentsService(client: HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport()) {
            $0.coalescesRequests = false
            $0.tracer = tracer
            $0.metrics = PrometheusRegistry()
        })
        let plain = GraphQLMomentsService(client: HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport()) {
            $0.coalescesRequests = false
        })
        let trace = TraceContext.random()
        _ = try await plain.getMoments(userID: "0")
        _ = try await TraceContext.withValue(trace) { try await observed.getMoments(userID: "0") }

        let sequential = try await Harness.compare(
            sdk: {
                try await TraceContext.withValue(trace) {
                    try await Harness.rate(for: Harness.roundDuration) { _ = try await observed.getMoments(userID: "0"); return 1 }
                }
            },
            baseline: { try await Harness.rate(for: Harness.roundDuration) { _ = try await plain.getMoments(userID: "0"); return 1 } }
        )
        let spans = tracer.count
        return [Harness.row(
            "observability: getMoments with tracing and metrics on vs off", unit: "req/s", sequential, target: 0.95,
            note: "\(spans) spans kept"
        )]
    }
}

/// A tracer that keeps each span's name, attributes and end, as an exporter would before
/// sending them on.
private final class KeepingTracer: MomentsTracer {
    private let spans = PThreadMutex<[KeptSpan]>([])
    var count: Int { spans.withLock { $0.count } }

    func startSpan(_ name: String, kind: SpanKind, context: TraceContext, parent: TraceContext) -> any MomentsSpan {
        let span = KeptSpan(name: name, context: context)
        spans.withLock { $0.append(span) }
        return span
    }
}

private final class KeptSpan: MomentsSpan {
    let name: String
    let context: TraceContext
    private let state = PThreadMutex<(attributes: [String: SpanAttribute], ended: ContinuousClock.Instant?)>(([:], nil))

    init(name: String, context: TraceContext) { (self.name, self.context) = (name, context) }
    func setAttribute(_ key: String, _ value: SpanAttribute) { state.withLock { $0.attributes[key] = value } }
    func recordError(_ error: any Error) { setAttribute("exception.message", .string("\(error)")) }
    func end() { state.withLock { $0.ended = .now } }
}
