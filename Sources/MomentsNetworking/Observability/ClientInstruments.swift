import Foundation
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// An ``HTTPClient``'s spans and figures: each HTTP attempt's span and trace headers,
/// and OpenTelemetry's HTTP client metrics. Without a tracer, a metrics factory and a
/// current `TraceContext`, it does nothing.
final class ClientInstruments: Sendable {
    let tracer: (any MomentsTracer)?
    let metrics: (any MomentsMetricsFactory)?
    private let host: String
    private let port: Int
    /// Metrics made once per set of dimensions.
    private let durations = PThreadMutex<[String: any MomentsHistogram]>([:])
    private let counters = PThreadMutex<[String: any MomentsCounter]>([:])
    private let breakerState: (any MomentsGauge)?
    private let requestSize: (any MomentsHistogram)?
    private let responseSize: (any MomentsHistogram)?

    init(configuration: HTTPClient.Configuration) {
        tracer = configuration.tracer
        metrics = configuration.metrics
        host = configuration.baseURL.host ?? ""
        port = configuration.baseURL.port ?? (configuration.baseURL.scheme == "https" ? 443 : 80)
        let server = [("server.address", host)]
        breakerState = configuration.metrics?.makeGauge("moments.http.client.circuit_breaker.state", dimensions: server)
        requestSize = configuration.metrics?.makeHistogram("http.client.request.body.size", unit: "By", dimensions: server)
        responseSize = configuration.metrics?.makeHistogram("http.client.response.body.size", unit: "By", dimensions: server)
    }

    var isTracing: Bool { TraceContext.current != nil }

    /// Whether the breaker's state is a figure (a metrics factory is set).
    var reportsBreaker: Bool { breakerState != nil }

    /// `request` with the trace headers of a new span of the current context, and that
    /// span (if a tracer is set); `request` alone without a context.
    func beginAttempt(_ request: consuming HTTPRequest, resend: Int) -> (HTTPRequest, (any MomentsSpan)?) {
        guard let parent = TraceContext.current else { return (request, nil) }
        let proposed = parent.child()
        let span = tracer?.startSpan("HTTP \(request.method.rawValue)", kind: .client, context: proposed, parent: parent)
        let context = span?.traceContext ?? proposed
        var traced = request
        traced.headers["traceparent"] = context.traceparent
        if let state = context.tracestate { traced.headers["tracestate"] = state }
        guard let span else { return (traced, nil) }
        span.setAttribute("http.request.method", .string(traced.method.rawValue))
        span.setAttribute("server.address", .string(host))
        span.setAttribute("server.port", .int(port))
        span.setAttribute("url.full", .string(HTTPClientError.redactedURL(traced.url)))
        if resend > 0 { span.setAttribute("http.request.resend_count", .int(resend)) }
        return (traced, span)
    }

    /// Ends an attempt: its span, and its duration, sizes and outcome in the metrics.
    func endAttempt(
        _ request: HTTPRequest, span: (any MomentsSpan)?, duration: Duration, response: HTTPResponse?, error: HTTPClientError?
    ) {
        let errorType = error.map { Self.errorType($0) }
        if let span {
            if let status = response?.statusCode ?? error?.statusCode { span.setAttribute("http.response.status_code", .int(status)) }
            if let errorType { span.setAttribute("error.type", .string(errorType)) }
            if let error { span.recordError(error) }
            span.end()
        }
        guard let metrics else { return }
        let status = response?.statusCode ?? error?.statusCode
        let key = "\(request.method.rawValue) \(status.map(String.init) ?? "") \(errorType ?? "")"
        let histogram = durations.withLock { cache -> any MomentsHistogram in
            if let existing = cache[key] { return existing }
            var dimensions = [("http.request.method", request.method.rawValue), ("server.address", host), ("server.port", String(port))]
            if let status { dimensions.append(("http.response.status_code", String(status))) }
            if let errorType { dimensions.append(("error.type", errorType)) }
            let made = metrics.makeHistogram("http.client.request.duration", unit: "s", dimensions: dimensions)
            cache[key] = made
            return made
        }
        histogram.record(duration.seconds)
        requestSize?.record(Double(request.bodyLength))
        if let response { responseSize?.record(Double(response.body.count)) }
    }

    /// Counts a retry, or a retry not made and why.
    func countRetry(stopped: RetryStop?) {
        guard let metrics else { return }
        let name = stopped == nil ? "moments.http.client.retries" : "moments.http.client.retries_stopped"
        let reason = stopped.map { String(describing: $0) } ?? ""
        counters.withLock { cache -> any MomentsCounter in
            if let existing = cache[name + reason] { return existing }
            var dimensions = [("server.address", host)]
            if let stopped { dimensions.append(("reason", Self.reason(stopped))) }
            let made = metrics.makeCounter(name, dimensions: dimensions)
            cache[name + reason] = made
            return made
        }.increment(by: 1)
    }

    /// Sets the breaker's state: 0 closed, 1 probing, 2 open.
    func setBreaker(_ phase: CircuitBreakerState.Phase?) {
        guard let breakerState, let phase else { return }
        switch phase {
        case .closed: breakerState.set(0)
        case .halfOpen: breakerState.set(1)
        case .open: breakerState.set(2)
        }
    }

    /// OpenTelemetry's `error.type`: the failure's kind, in snake case.
    static func errorType(_ error: HTTPClientError) -> String {
        if error.code == .serverError, let status = error.statusCode { return String(status) }
        if let failure = error.transportFailure { return String(describing: failure.kind).replacingOccurrences(of: " ", with: "_") }
        return String(describing: error.code).replacingOccurrences(of: " ", with: "_")
    }

    private static func reason(_ stop: RetryStop) -> String {
        switch stop {
        case .budgetExhausted: "budget_exhausted"
        case .deadline: "deadline"
        case .circuitOpen: "circuit_open"
        default: "attempts_exhausted"
        }
    }
}
