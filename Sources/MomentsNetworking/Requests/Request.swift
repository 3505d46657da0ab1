public import Foundation
public import MomentsHTTP

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
    /// How the client treats the request: deadline, retries, hedging, caching,
    /// priority, cancellation groups, its own middlewares, a download's file. The
    /// default, `RequestOptions()`, changes nothing.
    var options: RequestOptions { get }

    /// Rejects a request whose parameters are invalid, before anything is sent.
    /// The default accepts every request.
    ///
    /// - Throws: any error; the client reports it as
    ///   `HTTPClientError.Code.invalidRequest`.
    func validate() throws

    /// Decodes a successful answer.
    func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response

    /// Interprets an answer whose status is outside the accepted range, or returns `nil`
    /// to report it as `HTTPClientError.Code.serverError`. The default
    /// returns `nil`.
    func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError?

    /// Interprets an answer whose status *is* accepted, before it is decoded: return an
    /// error for a backend that answers 200 with an error envelope (for example
    /// `{"ok": false, "error": …}`), or `nil` to decode it. The default returns `nil`.
    /// An error returned here is thrown as it is and the answer is not cached.
    func failure(forAccepted response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError?
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
    /// The default changes nothing.
    public var options: RequestOptions { RequestOptions() }
    /// The default accepts every request.
    public func validate() throws {}
    /// The default is `nil`: a server error.
    public func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? { nil }
    /// The default is `nil`: decode the answer.
    public func failure(forAccepted response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? { nil }
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
    /// The file the body was written to (``RequestOptions/downloadDestination``).
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> URL {
        guard let file = response.bodyFile else {
            throw ValidationError("the answer was not written to a file: the request names no download destination (RequestOptions.downloadDestination)")
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
