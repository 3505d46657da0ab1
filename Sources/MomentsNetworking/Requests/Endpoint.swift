public import Foundation

/// A request built as a value, for the places where declaring a type per endpoint is
/// more ceremony than it is worth (the intensive style).
///
/// Sent through the same `HTTPClient.send(_:)` as any ``Request``.
///
/// For example:
/// ```swift
/// let user = try await client.send(
///     Endpoint<User>.get("/users/\(segment: id)")
///         .header("Accept-Language", "en")
///         .query("fields", "name,avatar")
///         .timeout(.seconds(5))
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
    /// The deadline; `nil` uses the client's.
    public var timeout: Duration?
    /// Middlewares for this request only. The default is none.
    public var middlewares: [any HTTPMiddleware] = []
    /// Who goes first at the concurrency limit. The default is `.normal`.
    public var priority: RequestPriority = .normal
    /// The cache policy; `nil` uses the client's.
    public var cachePolicy: CachePolicy?
    /// How long a cached answer stays fresh; `nil` uses the client's.
    public var cacheTTL: Duration?
    /// A request sent with the same key cancels this one. The default is none.
    public var latestWinsKey: String?
    /// The groups for ``HTTPClient/cancelAll(in:)``. The default is none.
    public var groups: Set<String> = []
    private var retryOverride: Bool?
    private var cacheableOverride: Bool?
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

    /// The method's idempotency, unless set with ``retryable(_:)``.
    public var allowsRetry: Bool { retryOverride ?? method.isIdempotent }
    /// `GET` only, unless set with ``cacheable(_:)``.
    public var isCacheable: Bool { cacheableOverride ?? (method == .get) }

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

    /// Returns this request with raw bytes as its body.
    public func body(_ data: Data, contentType: String?) -> Self {
        var copy = self
        copy.body = .data(data, contentType: contentType)
        return copy
    }

    /// Returns this request with `body` (for example ``RequestBody/formURLEncoded(_:)``).
    public func body(_ body: RequestBody) -> Self {
        var copy = self
        copy.body = body
        return copy
    }

    /// Returns this request with its own deadline.
    public func timeout(_ timeout: Duration) -> Self {
        var copy = self
        copy.timeout = timeout
        return copy
    }

    /// Returns this request with a middleware of its own appended.
    public func middleware(_ middleware: any HTTPMiddleware) -> Self {
        var copy = self
        copy.middlewares.append(middleware)
        return copy
    }

    /// Returns this request with a priority.
    public func priority(_ priority: RequestPriority) -> Self {
        var copy = self
        copy.priority = priority
        return copy
    }

    /// Returns this request allowed (or not) to be retried, whatever its method.
    public func retryable(_ allowsRetry: Bool = true) -> Self {
        var copy = self
        copy.retryOverride = allowsRetry
        return copy
    }

    /// Returns this request with its own cache policy and, optionally, time to live.
    public func cachePolicy(_ policy: CachePolicy, ttl: Duration? = nil) -> Self {
        var copy = self
        copy.cachePolicy = policy
        if let ttl { copy.cacheTTL = ttl }
        return copy
    }

    /// Returns this request marked cacheable (or not), whatever its method.
    public func cacheable(_ isCacheable: Bool = true) -> Self {
        var copy = self
        copy.cacheableOverride = isCacheable
        return copy
    }

    /// Returns this request in `group` too, for ``HTTPClient/cancelAll(in:)``.
    public func group(_ group: String) -> Self {
        var copy = self
        copy.groups.insert(group)
        return copy
    }

    /// Returns this request cancelling any in-flight request of the same key (latest wins).
    public func latestWins(_ key: String) -> Self {
        var copy = self
        copy.latestWinsKey = key
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

    /// An endpoint of this method at `path`.
    public static func get(_ path: String) -> Self { Self(.get, path) }
    /// An endpoint of this method at `path`.
    public static func post(_ path: String) -> Self { Self(.post, path) }
    /// An endpoint of this method at `path`.
    public static func put(_ path: String) -> Self { Self(.put, path) }
    /// An endpoint of this method at `path`.
    public static func patch(_ path: String) -> Self { Self(.patch, path) }
    /// An endpoint of this method at `path`.
    public static func delete(_ path: String) -> Self { Self(.delete, path) }
}

extension Endpoint where Response == Data {
    /// A request whose answer is returned as raw bytes.
    public init(_ method: HTTPMethod, _ path: String) {
        self.init(method, path) { response, _ in response.body }
    }

    /// An endpoint of this method at `path`.
    public static func get(_ path: String) -> Self { Self(.get, path) }
    /// An endpoint of this method at `path`.
    public static func post(_ path: String) -> Self { Self(.post, path) }
    /// An endpoint of this method at `path`.
    public static func put(_ path: String) -> Self { Self(.put, path) }
    /// An endpoint of this method at `path`.
    public static func patch(_ path: String) -> Self { Self(.patch, path) }
    /// An endpoint of this method at `path`.
    public static func delete(_ path: String) -> Self { Self(.delete, path) }
}

extension Endpoint where Response == Void {
    /// A request whose answer body is ignored.
    public init(_ method: HTTPMethod, _ path: String) {
        self.init(method, path) { _, _ in }
    }

    /// An endpoint of this method at `path`.
    public static func get(_ path: String) -> Self { Self(.get, path) }
    /// An endpoint of this method at `path`.
    public static func post(_ path: String) -> Self { Self(.post, path) }
    /// An endpoint of this method at `path`.
    public static func put(_ path: String) -> Self { Self(.put, path) }
    /// An endpoint of this method at `path`.
    public static func patch(_ path: String) -> Self { Self(.patch, path) }
    /// An endpoint of this method at `path`.
    public static func delete(_ path: String) -> Self { Self(.delete, path) }
    /// An endpoint of this method at `path`.
    public static func head(_ path: String) -> Self { Self(.head, path) }
}
