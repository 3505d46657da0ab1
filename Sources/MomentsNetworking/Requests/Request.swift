public import Foundation

/// One endpoint of an HTTP API: where it lives, what it sends and how its answer decodes.
///
/// Declare one type per endpoint (the discrete style); every requirement but `path`
/// has a default. Parameters are checked in ``validate()``, before anything is sent.
///
/// For example:
/// ```swift
/// struct GetUser: Request {
///     typealias Response = User
///     let id: String
///     var path: String { "/users/\(segment: id)" }
///     func validate() throws {
///         guard !id.isEmpty else { throw ValidationError("id is empty") }
///     }
/// }
/// let user = try await client.send(GetUser(id: "42"))
/// ```
///
/// Responses decode as JSON when `Response` is `Decodable`, as raw bytes when it is
/// `Data`, and are ignored when it is `Void`.
public protocol Request: Sendable {
    /// The value a successful answer decodes to.
    associatedtype Response: Sendable

    /// The path, appended to the client's base URL. Place identifiers with
    /// `"\(segment: id)"` so they stay one path segment.
    var path: String { get }
    /// The method. The default is `GET`.
    var method: HTTPMethod { get }
    /// The query items. The default is none.
    var query: [URLQueryItem] { get }
    /// Header fields; they win over the client's default headers. The default is none.
    var headers: HTTPHeaders { get }
    /// The body. The default is none.
    var body: RequestBody? { get }
    /// The deadline for this request; `nil` uses the client's. The default is `nil`.
    var timeout: Duration? { get }
    /// A file to write the answer's body into as it arrives, instead of memory (a large
    /// download); the client's size limit and the deadline still apply. A request whose
    /// `Response` is `URL` decodes to this file. The default is `nil`.
    var downloadDestination: URL? { get }

    /// Rejects a request whose parameters are invalid, before anything is sent.
    /// The default accepts every request.
    ///
    /// - Throws: any error; the client reports it as
    ///   ``HTTPClientError/Code-swift.struct/invalidRequest``.
    func validate() throws

    /// Decodes a successful answer.
    func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response

    /// Interprets an answer whose status is outside the accepted range, or returns `nil`
    /// to report it as ``HTTPClientError/Code-swift.struct/serverError``. The default
    /// returns `nil`.
    func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError?

    /// Interprets an answer whose status *is* accepted, before it is decoded: return an
    /// error for a backend that answers 200 with an error envelope (for example
    /// `{"ok": false, "error": …}`), or `nil` to decode it. The default returns `nil`.
    /// An error returned here is thrown as it is and the answer is not cached.
    func failure(forAccepted response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError?

    // MARK: Policies

    /// Middlewares for this request only, run after the client's. The default is none.
    var middlewares: [any HTTPMiddleware] { get }
    /// Who goes first when the client's concurrency limit is reached. The default is `.normal`.
    var priority: RequestPriority { get }
    /// Whether the request may be retried. The default is the method's idempotency;
    /// a request that is safe to repeat opts in by returning `true`.
    var allowsRetry: Bool { get }
    /// Whether a slow attempt may be sent a second time, the first good answer winning
    /// (see ``HedgingPolicy``); only ever for a request that ``allowsRetry``. The
    /// default is `false`.
    var hedges: Bool { get }
    /// Whether successful answers may be cached and identical requests in flight
    /// shared. The default is `true` for `GET` only.
    var isCacheable: Bool { get }
    /// The cache policy for this request; `nil` uses the client's. The default is `nil`.
    var cachePolicy: CachePolicy? { get }
    /// How long a cached answer stays fresh; `nil` uses the client's. The default is `nil`.
    var cacheTTL: Duration? { get }
    /// A request sent with the same key while this one is in flight cancels this one
    /// (latest wins). The default is `nil`: no such key.
    var latestWinsKey: String? { get }
    /// The groups this request belongs to, for ``HTTPClient/cancelAll(in:)`` (for example
    /// `["images"]`, to cancel every image download and keep the rest). The default is
    /// none.
    var groups: Set<String> { get }
}

extension Request {
    /// The default is `GET`.
    public var method: HTTPMethod { .get }
    /// The default is none.
    public var query: [URLQueryItem] { [] }
    /// The default is none.
    public var headers: HTTPHeaders { [:] }
    /// The default is none.
    public var body: RequestBody? { nil }
    /// The default is `nil`: the client's.
    public var timeout: Duration? { nil }
    /// The default is `nil`: the body is kept in memory.
    public var downloadDestination: URL? { nil }
    /// The default accepts every request.
    public func validate() throws {}
    /// The default is `nil`: a server error.
    public func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? { nil }
    /// The default is `nil`: decode the answer.
    public func failure(forAccepted response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? { nil }
    /// The default is none.
    public var middlewares: [any HTTPMiddleware] { [] }
    /// The default is `.normal`.
    public var priority: RequestPriority { .normal }
    /// The default is the method's idempotency.
    public var allowsRetry: Bool { method.isIdempotent }
    /// Not hedged.
    public var hedges: Bool { false }
    /// The default is `true` for `GET` only.
    public var isCacheable: Bool { method == .get }
    /// The default is `nil`: the client's.
    public var cachePolicy: CachePolicy? { nil }
    /// The default is `nil`: the client's.
    public var cacheTTL: Duration? { nil }
    /// The default is `nil`: no such key.
    public var latestWinsKey: String? { nil }
    /// The default is none.
    public var groups: Set<String> { [] }
}

extension Request where Response: Decodable {
    /// Decodes the body as JSON with `decoder`.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response {
        try decoder.decode(Response.self, from: response.body)
    }
}

extension Request where Response == Data {
    /// The body's bytes.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Data {
        response.body
    }
}

extension Request where Response == URL {
    /// The file the body was written to (``downloadDestination``).
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> URL {
        guard let file = response.bodyFile else {
            throw ValidationError("the answer was not written to a file: the request names no downloadDestination")
        }
        return file
    }
}

extension Request where Response == Void {
    /// Ignores the body.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws {}
}

/// A simple error for ``Request/validate()`` implementations.
public struct ValidationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong.
    public let message: String
    /// An error saying `message`.
    public init(_ message: String) { self.message = message }
    /// A one-line description, for logs and messages.
    public var description: String { message }
}
