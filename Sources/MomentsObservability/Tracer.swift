/// Where the SDK's spans go: shaped like swift-distributed-tracing's `Tracer`, so an
/// adapter to it (or to any other tracing system) is one small file.
///
/// The SDK starts a span for each store call (`moments.store.refresh`,
/// `moments.store.set_like`), each service call (`moments.service.get_moments`,
/// `moments.service.update_like`), each HTTP attempt (`HTTP GET`, …, with OpenTelemetry's
/// HTTP client attribute names: `http.request.method`, `server.address`, `server.port`,
/// `url.full`, `http.response.status_code`, `http.request.resend_count`, `error.type`)
/// and each persistence write (`moments.persistence.save`), each the child of the span
/// around it. Spans are started only under a ``TraceContext`` (see
/// ``TraceContext/current``).
public protocol MomentsTracer: Sendable {
    /// Starts a span named `name`, child of `parent`; `context` is the span's own as the
    /// SDK proposes it (the parent's trace, a new span id), which the SDK sends on with what
    /// it does next unless the span answers another ``MomentsSpan/traceContext``.
    func startSpan(_ name: String, kind: SpanKind, context: TraceContext, parent: TraceContext) -> any MomentsSpan
}

/// One span of work, ended exactly once.
public protocol MomentsSpan: Sendable {
    /// The span's own context, when the tracing system chose its ids itself (as
    /// swift-distributed-tracing's tracers do): the SDK then sends this one, so the server
    /// sees the span the tracing system recorded as its parent. `nil` (the default) keeps
    /// the context the SDK proposed.
    var traceContext: TraceContext? { get }
    /// Sets an attribute (OpenTelemetry's names where one exists).
    func setAttribute(_ key: String, _ value: SpanAttribute)
    /// Records that the work failed with `error`.
    func recordError(_ error: any Error)
    /// Ends the span.
    func end()
}

extension MomentsSpan {
    /// `nil`: the span keeps the context the SDK proposed.
    public var traceContext: TraceContext? { nil }
}

/// What kind of work a span is (OpenTelemetry's span kinds).
public enum SpanKind: Sendable, Hashable {
    /// Work within the process.
    case `internal`
    /// A request to another service.
    case client
}

/// A span attribute's value.
public enum SpanAttribute: Sendable, Hashable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)

    /// The value as text.
    public var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        }
    }
}

extension TraceContext {
    /// Runs `operation` in a span named `name` under the current context (if a tracer
    /// and a context are set; otherwise it runs `operation` alone, at no cost), with the
    /// span's context current inside it; the span records a thrown error and ends.
    package static func span<T>(
        _ name: String, kind: SpanKind = .internal, tracer: (any MomentsTracer)?,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: (_ span: (any MomentsSpan)?) async throws -> T
    ) async rethrows -> T {
        guard let parent = current else { return try await operation(nil) }
        let proposed = parent.child()
        let span = tracer?.startSpan(name, kind: kind, context: proposed, parent: parent)
        let context = span?.traceContext ?? proposed
        defer { span?.end() }
        return try await $current.withValue(context, operation: {
            do {
                return try await operation(span)
            } catch {
                span?.recordError(error)
                throw error
            }
        }, isolation: isolation)
    }
}
