import Foundation
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// Turns a request's outcome into one log record and one metrics value.
struct RequestRecorder: Sendable {
    let configuration: HTTPClient.Configuration

    var isActive: Bool { configuration.logHandler != nil || configuration.metricsHandler != nil }

    func record(
        name: String, request: HTTPRequest, duration: Duration,
        response: HTTPResponse?, attempts: Int, fromCache: Bool, error: HTTPClientError?,
        secrets: SentSecrets? = nil
    ) {
        let url = HTTPClientError.redactedURL(request.url)
        configuration.metricsHandler?(RequestMetrics(
            requestName: name, method: request.method, url: url, statusCode: response?.statusCode ?? error?.statusCode,
            duration: duration, attempts: attempts, isFromCache: fromCache,
            responseBytes: response?.body.count ?? 0, errorCode: error?.code
        ))
        guard let handler = configuration.logHandler else { return }
        let level: LogRecord.Level = error == nil ? .info : .error
        guard level >= configuration.logLevel else { return }
        let status = (response?.statusCode ?? error?.statusCode).map(String.init) ?? "-"
        var metadata = [
            "method": request.method.rawValue, "url": url, "status": status,
            "duration_ms": String(format: "%.1f", duration.seconds * 1000),
            "attempts": String(attempts), "cache": fromCache ? "hit" : "miss", "request": name,
        ]
        if let error { metadata["error"] = error.description }
        if let trace = TraceContext.current { metadata["trace_id"] = trace.traceID }
        if configuration.logLevel <= .debug {
            // The credentials this request sent, wherever a body repeats them.
            let redact = { (text: String) in secrets?.redact(text) ?? text }
            let limit = configuration.logsFullExchanges ? Int.max / 8 : 1024
            if let body = request.body { metadata["request_body"] = redact(Self.compact(body, limit: limit)) }
            if let streamed = request.streamedBody { metadata["request_body"] = "(\(streamed.length) bytes streamed)" }
            if let body = response?.body ?? error?.response?.body { metadata["response_body"] = redact(Self.compact(body, limit: limit)) }
            if configuration.logsFullExchanges {
                // The whole exchange: the URL with its query, and every header, each
                // credential value redacted.
                metadata["url_full"] = redact(request.url.absoluteString)
                metadata["request_headers"] = request.headers.map { "\($0.name): \(redact($0.value))" }.joined(separator: "; ")
                if let headers = response?.headers ?? error?.response?.headers {
                    metadata["response_headers"] = headers.map { "\($0.name): \(redact($0.value))" }.joined(separator: "; ")
                }
            }
        }
        let outcome = error.map { "failed: \($0.code)" } ?? "\(status)"
        handler(LogRecord(level: level, message: "\(request.method) \(url) → \(outcome)", metadata: metadata))
    }

    private static let secretPattern = try? NSRegularExpression(
        pattern: #"("[A-Za-z_-]*(?:token|password|secret|authorization|api[_-]?key|cookie)[A-Za-z_-]*"\s*:\s*)"(?:[^"\\]|\\.)*""#,
        options: [.caseInsensitive]
    )

    /// At most `limit` characters of the body (1 KiB by default), whitespace collapsed,
    /// secret-looking JSON values redacted.
    static func compact(_ body: Data, limit: Int = 1024) -> String {
        var text = String(decoding: limit >= body.count ? body : body.prefix(limit * 4), as: UTF8.self)
        text = text.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        if let pattern = secretPattern {
            let range = NSRange(text.startIndex..., in: text)
            text = pattern.stringByReplacingMatches(in: text, range: range, withTemplate: "$1\"<redacted>\"")
        }
        return text.count > limit ? String(text.prefix(limit)) + "…" : text
    }
}
