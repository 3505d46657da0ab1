import Foundation
import Moments
import MomentsNetworking
import MomentsObservability
import MomentsBFF

// The adapters the "Wiring the SDK to swift-log, swift-metrics and
// swift-distributed-tracing" article shows, compiled against local stand-ins of those
// packages (SwiftServerShapes.swift). `ObservabilityAdapterTests` checks that the
// article's code is this file's, and runs it.

// MARK: Logs

extension Logger {
    /// A ``LogHandler`` that sends each of the SDK's records to this logger.
    var momentsLogHandler: LogHandler {
        { record in
            let level: Logger.Level = switch record.level {
            case .debug: .debug
            case .info: .info
            case .warning: .warning
            case .error: .error
            }
            self.log(level: level, "\(record.message)", metadata: record.metadata.mapValues { .string($0) })
        }
    }
}

// MARK: Metrics

/// The SDK's counters, gauges and histograms, made by swift-metrics.
struct SwiftMetricsFactory: MomentsMetricsFactory {
    func makeCounter(_ name: String, dimensions: [(String, String)]) -> any MomentsCounter {
        CounterAdapter(counter: Counter(label: name, dimensions: dimensions))
    }
    func makeGauge(_ name: String, dimensions: [(String, String)]) -> any MomentsGauge {
        GaugeAdapter(gauge: Gauge(label: name, dimensions: dimensions))
    }
    func makeHistogram(_ name: String, unit: String, dimensions: [(String, String)]) -> any MomentsHistogram {
        RecorderAdapter(recorder: Recorder(label: name, dimensions: dimensions, aggregate: true))
    }
}

struct CounterAdapter: MomentsCounter {
    let counter: Counter
    func increment(by amount: Int) { counter.increment(by: amount) }
}

struct GaugeAdapter: MomentsGauge {
    let gauge: Gauge
    func set(_ value: Double) { gauge.record(value) }
}

struct RecorderAdapter: MomentsHistogram {
    let recorder: Recorder
    func record(_ value: Double) { recorder.record(value) }
}

// MARK: Traces

/// The SDK's spans, started by swift-distributed-tracing's tracer: each is the child of
/// the SDK's current span, and its own context (whose ids the tracer chose) is what the
/// SDK sends on in `traceparent`.
struct DistributedTracingTracer: MomentsTracer {
    func startSpan(_ name: String, kind: MomentsObservability.SpanKind, context: TraceContext, parent: TraceContext) -> any MomentsSpan {
        var parentContext = ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(
            ["traceparent": parent.traceparent, "tracestate": parent.tracestate ?? ""], into: &parentContext, using: HeaderExtractor())
        let span = InstrumentationSystem.tracer.startSpan(name, context: parentContext, ofKind: kind == .client ? .client : .internal)
        return SpanAdapter(span: span)
    }
}

struct SpanAdapter: MomentsSpan {
    let span: Span

    var traceContext: TraceContext? { TraceContext(span.context) }
    func setAttribute(_ key: String, _ value: MomentsObservability.SpanAttribute) {
        span.attributes[key] = switch value {
        case .string(let text): .string(text)
        case .int(let number): .int64(Int64(number))
        case .double(let number): .double(number)
        case .bool(let flag): .bool(flag)
        }
    }
    func recordError(_ error: any Error) { span.recordError(error) }
    func end() { span.end() }
}

extension TraceContext {
    /// The W3C context of a swift-distributed-tracing context, to run the SDK's work
    /// under: `TraceContext.withValue(TraceContext(.current)) { ... }`.
    init?(_ context: ServiceContext) {
        var headers: [String: String] = [:]
        InstrumentationSystem.instrument.inject(context, into: &headers, using: HeaderInjector())
        self.init(traceparent: headers["traceparent"], tracestate: headers["tracestate"].flatMap { $0.isEmpty ? nil : $0 })
    }
}

struct HeaderExtractor: Extractor {
    func extract(key: String, from headers: [String: String]) -> String? { headers[key] }
}

struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into headers: inout [String: String]) { headers[key] = value }
}

// MARK: Setup

/// A store whose client and store report to the three tools.
func makeObservedStore(baseURL: URL, logger: Logger) -> MomentsStore {
    let client = HTTPClient(baseURL: baseURL, transport: URLSessionTransport()) {
        $0.logHandler = logger.momentsLogHandler
        $0.tracer = DistributedTracingTracer()
        $0.metrics = SwiftMetricsFactory()
    }
    return MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence(), configuration: .init {
        $0.logHandler = logger.momentsLogHandler
        $0.tracer = DistributedTracingTracer()
        $0.metrics = SwiftMetricsFactory()
    })
}

/// Serving a request: the SDK's work continues the request's trace.
func timeline(of userID: String, in store: MomentsStore, serving request: ServiceContext) async throws -> MomentsDetails {
    try await TraceContext.withValue(TraceContext(request)) {
        try await store.refresh(userID: userID)
    }
}
