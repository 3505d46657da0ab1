public import Foundation
public import MomentsHTTP

/// A request built as a value, for the places where declaring a type per endpoint is
/// more ceremony than it is worth (the intensive style).
///
/// Sent through the same `HTTPClient.send(_:)` as any ``Request``.
///
/// For example:
/// ```swift
/// let user = try await client.send(
///     Endpoint<User>(.get, "/users/\(segment: id)")
///         .header("Accept-Language", "en")
///         .query("fields", "name,avatar")
///         .options { $0.timeout = .seconds(5) }
/// )
/// ```
public struct Endpoint<Response: Sendable>: Request {
    /// The method.
    public var method: HTTPMethod
    /// The path, after the client's base URL.
    public var path: String
    /// The query items. The default is none.
    public var query: [URLQueryItem] = []
    /// Header fields, over the client's defaults. The default is none.
    public var headers: HTTPHeaders = [:]
    /// The body. The default is none.
    public var body: RequestBody?
    /// How the client treats it (deadline, retries, caching, priority, groups, its own
    /// middlewares, a download's file). The default changes nothing.
    public var options = RequestOptions()
    private let decode: @Sendable (HTTPResponse, JSONDecoder) throws -> Response

    /// Creates a request with a custom decoding of the answer.
    public init(
        _ method: HTTPMethod,
        _ path: String,
        decode: @escaping @Sendable (HTTPResponse, JSONDecoder) throws -> Response
    ) {
        self.method = method
        self.path = path
        self.decode = decode
    }

    /// Decodes with the endpoint's decoding.
    public func decodeResponse(_ response: HTTPResponse, decoder: JSONDecoder) throws -> Response {
        try decode(response, decoder)
    }

    // MARK: Modifiers

    /// Returns this request with the header field `name` set to `value`.
    public func header(_ name: String, _ value: String) -> Self {
        var copy = self
        copy.headers[name] = value
        return copy
    }

    /// Returns this request with a query item appended.
    public func query(_ name: String, _ value: String?) -> Self {
        var copy = self
        copy.query.append(URLQueryItem(name: name, value: value))
        return copy
    }

    /// Returns this request with `value` as its JSON body.
    public func body(_ value: some Encodable & Sendable) -> Self {
        var copy = self
        copy.body = .json(value)
        return copy
    }

    /// Returns this request with `body` (for example ``RequestBody/formURLEncoded(_:)``).
    public func body(_ body: RequestBody) -> Self {
        var copy = self
        copy.body = body
        return copy
    }

    /// Returns this request with its options changed by `change`, for example
    /// `.options { $0.timeout = .seconds(5) }`.
    public func options(_ change: (inout RequestOptions) -> Void) -> Self {
        var copy = self
        change(&copy.options)
        return copy
    }
}

extension Endpoint where Response: Decodable {
    /// A request whose answer decodes from JSON.
    public init(_ method: HTTPMethod, _ path: String) {
        self.init(method, path) { response, decoder in
            try decoder.decode(Response.self, from: response.body)
        }
    }
}

extension Endpoint where Response == Data {
    /// A request whose answer is returned as raw bytes.
    public init(_ method: HTTPMethod, _ path: String) {
        self.init(method, path) { response, _ in response.body }
    }
}

extension Endpoint where Response == Void {
    /// A request whose answer body is ignored.
    public init(_ method: HTTPMethod, _ path: String) {
        self.init(method, path) { _, _ in }
    }
}
