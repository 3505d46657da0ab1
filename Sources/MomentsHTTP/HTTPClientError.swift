public import Foundation
import MomentsSupport

/// Why a call through `HTTPClient` produced no value.
///
/// The outcomes of a call are kept apart: the server answered with a failure status
/// (``Code-swift.struct/serverError``: ``response`` holds status, headers and body);
/// no usable answer arrived (``Code-swift.struct/transportFailure``: ``transportFailure``
/// says why); the answer could not be decoded (``Code-swift.struct/decodingFailure``);
/// and the request was cancelled, invalid, or its response too large.
///
/// It is a struct over an open set of codes, so codes can be added without breaking
/// anyone's `switch`. Compare codes with `==`:
/// ```swift
/// do { try await client.send(request) }
/// catch let error as HTTPClientError where error.code == .serverError {
///     let apiError = try error.decodeBody(as: APIError.self)
/// }
/// ```
/// No description ever contains a request header value or a token: every credential
/// value a request sent is removed from the text of its error, whatever the server
/// echoed back.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The server answered with a status outside the accepted range.
        public static let serverError = Code("server error")
        /// No usable answer: refused, reset, DNS failure, timed out, truncated body.
        public static let transportFailure = Code("transport failure")
        /// The answer arrived but could not be decoded into the response type.
        public static let decodingFailure = Code("decoding failure")
        /// The GraphQL server answered with errors.
        public static let graphQLFailure = Code("GraphQL errors")
        /// The calling task, or the client, cancelled the request.
        public static let cancelled = Code("cancelled")
        /// The request was rejected before anything was sent.
        public static let invalidRequest = Code("invalid request")
        /// The response body was larger than the configured maximum.
        public static let responseTooLarge = Code("response too large")
        /// A middleware threw an error of its own.
        public static let middlewareFailure = Code("middleware failure")
        /// The token was refused and could not be refreshed, or none could be obtained.
        public static let authenticationFailure = Code("authentication failure")
        /// The cache policy allowed only the cache, and it held no usable answer.
        public static let cacheMiss = Code("cache miss")
        /// A redirect was refused by the `RedirectPolicy`, looped, or went on too long.
        public static let redirectFailure = Code("redirect failure")
        /// The client stopped sending to the server after repeated failures (see
        /// `CircuitBreakerPolicy`); ``HTTPClientError/retryAfter`` says when it tries again.
        public static let circuitOpen = Code("circuit open")
        /// Too many requests were waiting already (see
        /// `HTTPClient.Configuration.maximumQueuedRequests`); nothing was sent.
        public static let overloaded = Code("overloaded")
        /// The client was shut down (`HTTPClient.shutdown(gracePeriod:)`) before the
        /// request was sent; nothing was sent.
        public static let shutDown = Code("shut down")

        /// A one-line description, for logs and messages.
        public var description: String { name }
    }

    /// The stored fields. An error travels by value through every stage of a call and
    /// every frame that may catch it; kept in one immutable box, a copy is one reference,
    /// and a frame that holds one is small. A change makes a new box (``change(_:)``).
    private struct Fields: Sendable {
        let code: Code
        var method: HTTPMethod?
        var url: URL?
        let response: HTTPResponse?
        let transportFailure: TransportFailure?
        let decodingFailure: DecodingFailure?
        let graphQLErrors: [GraphQLError]
        let graphQLPartialData: Data?
        let underlyingError: (any Error)?
        let reason: String
        var retryAfter: Duration?
        var retriesStopped: RetryStop?
    }

    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    /// What kind of failure this is.
    public var code: Code { box.fields.code }
    /// The method of the failed request, when it was built.
    public package(set) var method: HTTPMethod? {
        get { box.fields.method }
        set { change { $0.method = newValue } }
    }
    /// The URL of the failed request, when it was built.
    public package(set) var url: URL? {
        get { box.fields.url }
        set { change { $0.url = newValue } }
    }
    /// The server's answer, for ``Code-swift.struct/serverError``,
    /// ``Code-swift.struct/decodingFailure`` and GraphQL failures.
    public var response: HTTPResponse? { box.fields.response }
    /// Why no usable answer arrived, for ``Code-swift.struct/transportFailure``.
    public var transportFailure: TransportFailure? { box.fields.transportFailure }
    /// Where decoding failed, for ``Code-swift.struct/decodingFailure``.
    public var decodingFailure: DecodingFailure? { box.fields.decodingFailure }
    /// The errors a GraphQL server returned, for ``Code-swift.struct/graphQLFailure``
    /// (users read them in ``graphQL``).
    package var graphQLErrors: [GraphQLError] { box.fields.graphQLErrors }
    /// The `data` a GraphQL server returned beside its errors, as JSON bytes, if any.
    package var graphQLPartialData: Data? { box.fields.graphQLPartialData }
    /// The error that caused this one, if any (a validation error, an encoding error).
    public var underlyingError: (any Error)? { box.fields.underlyingError }
    /// A short, human-readable explanation.
    public var reason: String { box.fields.reason }
    /// For ``Code-swift.struct/circuitOpen``: how long until the client sends to the
    /// server again.
    public package(set) var retryAfter: Duration? {
        get { box.fields.retryAfter }
        set { change { $0.retryAfter = newValue } }
    }
    /// Why the client made no further attempt at a call that could have been retried,
    /// if a retry policy is set and one was due: the budget, the deadline, the breaker,
    /// or the policy's maximum attempts.
    public package(set) var retriesStopped: RetryStop? {
        get { box.fields.retriesStopped }
        set { change { $0.retriesStopped = newValue } }
    }

    package init(
        code: Code,
        reason: String,
        response: HTTPResponse? = nil,
        transportFailure: TransportFailure? = nil,
        decodingFailure: DecodingFailure? = nil,
        graphQLErrors: [GraphQLError] = [],
        graphQLPartialData: Data? = nil,
        underlyingError: (any Error)? = nil
    ) {
        box = Box(Fields(
            code: code, method: nil, url: nil, response: response, transportFailure: transportFailure,
            decodingFailure: decodingFailure, graphQLErrors: graphQLErrors, graphQLPartialData: graphQLPartialData,
            underlyingError: underlyingError, reason: reason, retryAfter: nil, retriesStopped: nil
        ))
    }

    /// Changes a field in a new box: other copies keep theirs.
    private mutating func change(_ update: (inout Fields) -> Void) {
        var fields = box.fields
        update(&fields)
        box = Box(fields)
    }

    /// The HTTP status the server answered with, if it answered.
    public var statusCode: Int? { response?.statusCode }

    /// Whether the request may have reached the server: `false` only for failures the
    /// client knows came before anything was sent (a request it refused, an open
    /// circuit, an overload, a shut-down client, and transport failures whose
    /// ``TransportFailure/mayHaveReachedServer`` is `false`).
    public var mayHaveReachedServer: Bool {
        switch code {
        case .transportFailure: transportFailure?.mayHaveReachedServer ?? true
        case .invalidRequest, .circuitOpen, .overloaded, .shutDown: false
        default: true
        }
    }

    /// Decodes the body of the server's answer into the API's own error type.
    ///
    /// - Throws: ``Code-swift.struct/decodingFailure`` if there is no body or it does
    ///   not decode as `T`.
    public func decodeBody<T: Decodable>(as type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        guard let response, !response.body.isEmpty else {
            throw HTTPClientError(code: .decodingFailure, reason: "there is no response body to decode as \(T.self)")
        }
        do {
            return try decoder.decode(T.self, from: response.body)
        } catch {
            throw HTTPClientError.decodingFailed(T.self, error: error, response: response)
        }
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        var text = "HTTPClientError.\(code)"
        if let method, let url { text += " (\(method) \(Self.redactedURL(url)))" }
        text += ": \(reason)"
        if let retriesStopped { text += " (not retried: \(retriesStopped))" }
        return text
    }

    /// The URL without its query and fragment, which may carry credentials.
    package static func redactedURL(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        let hadQuery = components.query != nil
        components.query = nil
        components.fragment = nil
        components.user = nil
        components.password = nil
        return (components.string ?? "<url>") + (hadQuery ? "?…" : "")
    }
}

// MARK: - Making errors

extension HTTPClientError {
    /// The server answered with a failure status.
    public static func serverError(_ response: HTTPResponse) -> HTTPClientError {
        var reason = "the server answered \(HTTPStatus.text(response.statusCode))"
        let excerpt = response.bodyExcerpt(limit: 200)
        if !excerpt.isEmpty { reason += ": \(excerpt)" }
        return HTTPClientError(code: .serverError, reason: reason, response: response)
    }

    /// No usable answer arrived; `underlyingError` is the platform's own error, if any.
    public static func transportFailure(_ failure: TransportFailure, underlyingError: (any Error)? = nil) -> HTTPClientError {
        HTTPClientError(code: .transportFailure, reason: failure.description, transportFailure: failure, underlyingError: underlyingError)
    }

    /// The request was cancelled.
    public static func cancelled() -> HTTPClientError {
        HTTPClientError(code: .cancelled, reason: "the request was cancelled")
    }

    /// The client was shut down before the request was sent.
    public static func shutDown() -> HTTPClientError {
        HTTPClientError(code: .shutDown, reason: "the client is shut down; nothing was sent")
    }

    /// The request was rejected before anything was sent.
    package static func invalidRequest(_ reason: String, underlyingError: (any Error)? = nil) -> HTTPClientError {
        HTTPClientError(code: .invalidRequest, reason: reason, underlyingError: underlyingError)
    }

    /// The response body exceeded `limit` bytes.
    public static func responseTooLarge(limit: Int, received: Int?) -> HTTPClientError {
        let size = received.map { "\($0) bytes" } ?? "more bytes"
        return HTTPClientError(
            code: .responseTooLarge,
            reason: "the response body (\(size)) exceeds the limit of \(limit) bytes"
        )
    }

    /// The body of `response` could not be decoded as `type`.
    public static func decodingFailed(_ type: Any.Type, error: any Error, response: HTTPResponse) -> HTTPClientError {
        let failure = DecodingFailure(type: type, error: error, body: response.body)
        return HTTPClientError(
            code: .decodingFailure,
            reason: failure.description,
            response: response,
            decodingFailure: failure,
            underlyingError: error
        )
    }

    /// The GraphQL server answered with errors.
    package static func graphQLFailure(
        _ errors: [GraphQLError],
        partialData: Data?,
        response: HTTPResponse
    ) -> HTTPClientError {
        let messages = errors.prefix(3).map(\.description).joined(separator: "; ")
        let more = errors.count > 3 ? " (and \(errors.count - 3) more)" : ""
        // A failure status is named: a 401 whose body holds GraphQL errors is still a 401.
        let status = (200..<300).contains(response.statusCode) ? "" : " \(HTTPStatus.text(response.statusCode))"
        return HTTPClientError(
            code: .graphQLFailure,
            reason: "the server answered\(status) with GraphQL errors: \(messages)\(more)",
            response: response,
            graphQLErrors: errors,
            graphQLPartialData: partialData
        )
    }

    /// A middleware threw `error`.
    package static func middlewareFailure(_ middleware: String, error: any Error) -> HTTPClientError {
        HTTPClientError(code: .middlewareFailure, reason: "the middleware \(middleware) failed: \(error)", underlyingError: error)
    }

    /// Authentication failed; `reason` must not contain the token.
    package static func authenticationFailure(_ reason: String, error: (any Error)? = nil) -> HTTPClientError {
        HTTPClientError(code: .authenticationFailure, reason: reason, underlyingError: error)
    }

    /// This authentication failure with the answer that refused the token attached, its
    /// status named in the reason.
    package func refusing(_ response: HTTPResponse) -> HTTPClientError {
        HTTPClientError(
            code: code, reason: "the server answered \(HTTPStatus.text(response.statusCode)); \(reason)",
            response: response, underlyingError: underlyingError
        ).attaching(method: method, url: url)
    }

    /// The client's circuit breaker is open; it sends again after `retryAfter`.
    package static func circuitOpen(retryAfter: Duration) -> HTTPClientError {
        var error = HTTPClientError(
            code: .circuitOpen,
            reason: "the server failed repeatedly; nothing is sent to it for \(Int((retryAfter.seconds * 1_000).rounded(.up))) ms more"
        )
        error.retryAfter = retryAfter
        return error
    }

    /// Too many requests were waiting; nothing was sent.
    package static func overloaded(queued: Int) -> HTTPClientError {
        HTTPClientError(code: .overloaded, reason: "\(queued) requests are waiting already; this one was not sent")
    }

    /// The cache held no usable answer and the policy forbade the network.
    package static func cacheMiss(_ reason: String) -> HTTPClientError {
        HTTPClientError(code: .cacheMiss, reason: reason)
    }

    /// A redirect could not be followed; `chain` is every URL visited, in order.
    package static func redirectFailure(_ reason: String, chain: [URL]) -> HTTPClientError {
        let path = chain.map { redactedURL($0) }.joined(separator: " → ")
        return HTTPClientError(code: .redirectFailure, reason: "\(reason) (\(path))")
    }

    /// Returns this error with the request it belongs to attached.
    package func attaching(method: HTTPMethod?, url: URL?) -> HTTPClientError {
        var copy = self
        if copy.method == nil { copy.method = method }
        if copy.url == nil { copy.url = url }
        return copy
    }
}

/// The standard texts of HTTP status codes.
package enum HTTPStatus {
    /// `401 Unauthorized`; the bare number for a code without a standard text.
    package static func text(_ code: Int) -> String {
        guard let phrase = phrases[code] else { return String(code) }
        return "\(code) \(phrase)"
    }

    private static let phrases: [Int: String] = [
        100: "Continue", 101: "Switching Protocols", 103: "Early Hints",
        200: "OK", 201: "Created", 202: "Accepted", 203: "Non-Authoritative Information", 204: "No Content",
        205: "Reset Content", 206: "Partial Content",
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request", 422: "Unprocessable Content", 425: "Too Early", 426: "Upgrade Required",
        428: "Precondition Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 507: "Insufficient Storage", 511: "Network Authentication Required",
    ]
}

/// Why a call that could have been retried was not.
public struct RetryStop: Sendable, Hashable, CustomStringConvertible {
    private let name: String
    private init(_ name: String) { self.name = name }

    /// The `RetryBudget` was empty: retries were already adding all they may.
    public static let budgetExhausted = RetryStop("the retry budget is exhausted")
    /// The backoff before the next attempt would have passed the call's deadline.
    public static let deadline = RetryStop("the call's deadline would pass")
    /// The `RetryPolicy` allows no more attempts.
    public static let attemptsExhausted = RetryStop("no attempts left")
    /// The request is not repeatable and may have reached the server, which may have
    /// processed it: it is not sent again (RFC 9110 §9.2.2).
    public static let mayHaveBeenProcessed = RetryStop(
        "the request is not repeatable and the server may have processed it (declare it repeatable with RequestOptions.allowsRetry if it is)"
    )
    /// The circuit breaker opened.
    public static let circuitOpen = RetryStop("the circuit breaker is open")

    /// A one-line description, for logs and messages.
    public var description: String { name }
}
