import Foundation
import MomentsNetworking
import MomentsObservability

/// What a command run observes: its trace (continued from `TRACEPARENT`, the
/// OpenTelemetry environment carrier; a new one with `--verbose`), the requests it
/// prints with `--verbose`, and the figures it prints with `--metrics`.
struct Observing: Sendable {
    /// The run's trace context, if it has one.
    let trace: TraceContext?
    /// Where requests are printed (`--verbose`), one line each with the trace id.
    let requestLog: LogHandler?
    /// The run's figures (`--metrics`), printed in Prometheus' text format at its end.
    let metrics: PrometheusRegistry?

    /// The run's observing: set for the task the command runs in.
    @TaskLocal static var current = Observing(trace: nil, requestLog: nil, metrics: nil)

    init(trace: TraceContext?, requestLog: LogHandler?, metrics: PrometheusRegistry?) {
        self.trace = trace
        self.requestLog = requestLog
        self.metrics = metrics
    }

    init(_ arguments: ParsedArguments, environment: [String: String], console: Console) {
        let verbose = arguments.has("verbose")
        let continued = TraceContext(traceparent: environment["TRACEPARENT"], tracestate: environment["TRACESTATE"])
        trace = continued ?? (verbose ? .random() : nil)
        if verbose {
            let log: LogHandler = { record in
                guard let method = record.metadata["method"], let url = record.metadata["url"] else { return }
                let trace = record.metadata["trace_id"].map { " trace \($0)" } ?? ""
                let status = record.metadata["status"] ?? "-"
                let duration = record.metadata["duration_ms"] ?? "?"
                console.problem("moments: \(method) \(url) → \(status) in \(duration) ms\(trace)")
            }
            requestLog = log
        } else {
            requestLog = nil
        }
        metrics = arguments.has("metrics") ? PrometheusRegistry() : nil
    }
}
