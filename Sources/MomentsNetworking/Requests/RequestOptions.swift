public import Foundation
import MomentsHTTP

/// How the client treats one request: its deadline, retries, hedging, caching, priority,
/// cancellation and middlewares, and where its answer's body goes.
///
/// Every field defaults to "as the client is configured" or "as the method implies", so
/// a request states only what it does differently:
/// ```swift
/// struct Search: Request {
///     typealias Response = [Result]
///     var path: String { "/search" }
///     var options: RequestOptions { RequestOptions(timeout: .seconds(2), latestWinsKey: "search") }
/// }
/// ```
public struct RequestOptions: Sendable {
    /// The deadline for the whole call, retries included; `nil` uses the client's
    /// `timeout`.
    public var timeout: Duration?
    /// Whether the request may be sent again after a failed attempt; `nil` follows the
    /// method's idempotency. A request that is safe to repeat opts in with `true`.
    public var allowsRetry: Bool?
    /// Whether a slow attempt may be sent a second time, the first good answer winning
    /// (see ``HedgingPolicy``); only ever for a request that may be retried.
    public var hedges: Bool
    /// Whether successful answers may be cached and identical requests in flight
    /// shared; `nil` means `GET` only.
    public var isCacheable: Bool?
    /// The cache policy; `nil` uses the client's.
    public var cachePolicy: CachePolicy?
    /// How long a cached answer stays fresh; `nil` uses the client's.
    public var cacheTTL: Duration?
    /// Who goes first when the client's concurrency limit is reached.
    public var priority: RequestPriority
    /// A request sent with the same key while this one is in flight cancels this one
    /// (latest wins); `nil` for none.
    public var latestWinsKey: String?
    /// The groups the request belongs to, for ``HTTPClient/cancelAll(in:)`` (for
    /// example `["images"]`, to cancel every image download and keep the rest).
    public var groups: Set<String>
    /// Middlewares for this request only, run after the client's.
    public var middlewares: [any HTTPMiddleware]
    /// A file to write the answer's body into as it arrives, instead of memory (a large
    /// download); the client's size limit and the deadline still apply. A request whose
    /// `Response` is `URL` decodes to this file.
    public var downloadDestination: URL?

    /// Options that change nothing unless given: the client's deadline and cache
    /// policy, retries and caching as the method implies, normal priority, no hedging,
    /// no groups, no middlewares of its own, the body kept in memory.
    public init(
        timeout: Duration? = nil, allowsRetry: Bool? = nil, hedges: Bool = false, isCacheable: Bool? = nil,
        cachePolicy: CachePolicy? = nil, cacheTTL: Duration? = nil, priority: RequestPriority = .normal,
        latestWinsKey: String? = nil, groups: Set<String> = [], middlewares: [any HTTPMiddleware] = [],
        downloadDestination: URL? = nil
    ) {
        self.timeout = timeout
        self.allowsRetry = allowsRetry
        self.hedges = hedges
        self.isCacheable = isCacheable
        self.cachePolicy = cachePolicy
        self.cacheTTL = cacheTTL
        self.priority = priority
        self.latestWinsKey = latestWinsKey
        self.groups = groups
        self.middlewares = middlewares
        self.downloadDestination = downloadDestination
    }
}

extension RequestOptions {
    /// Whether a request with `method` may be retried: this choice, else the method's
    /// idempotency.
    func allowsRetry(for method: HTTPMethod) -> Bool { allowsRetry ?? method.isIdempotent }
    /// Whether answers to a request with `method` may be cached and identical requests
    /// shared: this choice, else `GET` only.
    func isCacheable(for method: HTTPMethod) -> Bool { isCacheable ?? (method == .get) }
}
