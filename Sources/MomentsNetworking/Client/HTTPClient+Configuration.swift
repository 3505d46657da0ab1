public import Foundation
public import MomentsObservability
public import MomentsHTTP

extension HTTPClient {
    /// How an ``HTTPClient`` builds, sends and checks requests.
    public struct Configuration: Sendable {
        // MARK: Where

        /// The URL every request's path is appended to, e.g. `https://bff.example.com/api`.
        public var baseURL: URL

        // MARK: What is sent

        /// Header fields sent with every request; a request's own fields of the same
        /// name win. The default is `Accept: application/json`.
        public var defaultHeaders: HTTPHeaders = ["Accept": "application/json"]
        /// Encodes `.json` request bodies. The default is a `JSONEncoder` with sorted
        /// keys: the same value always gives the same bytes, which keeps cache keys and
        /// coalescing stable (Foundation's encoder does not otherwise fix key order).
        public var encoder: JSONEncoder = {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return encoder
        }()

        // MARK: Limits

        /// The deadline for one call, unless the request sets its own: every attempt,
        /// backoff and hedge included, from the call to the last body byte. A call never
        /// outlives it (it fails with a `timedOut` transport failure); a retry whose
        /// backoff would pass it is not made. The default is 30 seconds.
        public var timeout: Duration = .seconds(30)
        /// The deadline for one attempt, within the call's ``timeout``; `nil` lets an
        /// attempt use whatever time the call has left. The default is `nil`.
        public var attemptTimeout: Duration?
        /// A header that tells the server how many milliseconds the call has left when
        /// each attempt goes (gRPC's `grpc-timeout` in spirit), so it can give up on
        /// work the caller will not wait for; `nil` sends none. The default is `nil`.
        public var deadlineHeader: String?
        /// The largest response body accepted, in bytes; `nil` for no limit.
        /// The default is 32 MiB.
        public var maximumResponseSize: Int? = 32 * 1024 * 1024

        // MARK: What is accepted

        /// Statuses that count as success; any other is a
        /// `HTTPClientError.Code.serverError`. The default is `200..<300`.
        public var acceptedStatusCodes: Range<Int> = 200..<300
        /// Decodes JSON responses. The default is a plain `JSONDecoder`.
        public var decoder: JSONDecoder = JSONDecoder()

        // MARK: Policies

        /// Middlewares every request passes through, in order. The default is none.
        public var middlewares: [any HTTPMiddleware] = []
        /// Injects a token and refreshes it on 401; runs after every other middleware.
        /// The default is `nil`: no authentication.
        public var authentication: AuthenticationMiddleware?
        /// When failed requests are retried; `nil` never retries. The default is `nil`.
        public var retryPolicy: RetryPolicy?
        /// How many retries (and hedges) the client may add to the calls it makes;
        /// `nil` for no limit. The default is ``RetryBudget/init(ratio:minimumPerSecond:maximumBalance:)``:
        /// 10% more, plus one a second.
        public var retryBudget: RetryBudget? = RetryBudget()
        /// When the client stops sending to a failing server, and how it probes its way
        /// back; `nil` never stops. The default is ``CircuitBreakerPolicy/init(failureRatio:minimumCalls:window:openDuration:maximumOpenDuration:probes:failureStatusCodes:)``:
        /// open when half of at least 10 calls in 10 seconds failed, probe after 2 seconds.
        public var circuitBreaker: CircuitBreakerPolicy? = CircuitBreakerPolicy()
        /// When a slow read whose ``RequestOptions/hedges`` is true is sent a second time; `nil`
        /// never hedges. The default is ``HedgingPolicy/init(delay:maximumAttemptsInFlight:)``:
        /// after the 95th percentile of recent latency, while fewer than 6 attempts are in
        /// flight to the origin.
        public var hedging: HedgingPolicy? = HedgingPolicy()
        /// The most exchanges in flight at once; `nil` for no limit. When reached,
        /// higher-priority requests go first. The default is 256.
        public var maximumConcurrentRequests: Int? = 256
        /// The most requests waiting for one of ``maximumConcurrentRequests``; a request
        /// beyond it fails at once with `HTTPClientError.Code.overloaded`
        /// instead of waiting (load shedding), and a request waits no longer than its
        /// call's deadline. The default is 1,024.
        public var maximumQueuedRequests: Int = 1_024
        /// Whether identical cacheable requests in flight share one exchange: same
        /// method, URL, body and identity, as the transport would send them (after
        /// every middleware). The default is `true`.
        public var coalescesRequests: Bool = true
        /// Headers that say who a request speaks for, beside `Authorization`, `Cookie`,
        /// `Proxy-Authorization`, the authentication middleware's header and any header
        /// named like a credential. Requests with different values never share an
        /// answer (cached or in flight), and the values never go to another origin on
        /// a redirect. The default is none.
        public var identityHeaders: [String] = []
        /// Which redirects are followed. The default is ``RedirectPolicy/sameOrigin``:
        /// up to 5, within the request's origin.
        public var redirectPolicy: RedirectPolicy = .sameOrigin

        // MARK: Caching

        /// Where answers are cached; `nil` caches nothing. The default is `nil`.
        ///
        /// Answers are cached per identity (see ``identityHeaders``). A request that
        /// passes through a middleware whose ``HTTPMiddleware/mayAddCredentials`` is
        /// `true` has an identity the client cannot know before sending: it is
        /// neither served from nor stored in the cache.
        public var cache: (any ResponseCache)?
        /// The cache policy of requests that do not set their own. The default is `.remote`.
        public var cachePolicy: CachePolicy = .remote
        /// How long a cached answer stays fresh. The default is 5 minutes.
        public var cacheTTL: Duration = .seconds(300)
        /// How old a cached answer may be and still serve `.remoteThenLocal` and
        /// `.localThenRemote`. The default is 1 day.
        public var maximumStaleness: Duration = .seconds(86_400)
        /// The failure statuses after which `.remoteThenLocal` serves the cached answer:
        /// answers saying the server could not answer now, as HTTP caches serve a stale
        /// answer on error (RFC 5861). Never an answer about the caller or the resource
        /// (401, 403, 404, 410 and every other 4xx): that answer stands. The default is
        /// 408, 429, 500, 502, 503 and 504.
        public var cacheFallbackStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504]

        // MARK: Time

        /// Where the client reads the time and waits for it: the call's deadline, the wait
        /// for a slot, backoffs, hedging delays, breaker windows, retry budgets, `Retry-After`
        /// dates and cached answers' ages. Give a `ManualClock` (product `MomentsTesting`) to
        /// move time in tests instead of waiting. The default is `SystemClock`.
        public var clock: any MomentsClock = SystemClock()

        // MARK: Observing

        /// Receives one record per request. The default is `nil`: nothing is logged.
        public var logHandler: LogHandler?
        /// The least important level handed to ``logHandler``; at `.debug`, records carry
        /// compact, redacted request and response bodies. The default is `.info`.
        public var logLevel: LogRecord.Level = .info
        /// Receives the timing of every request. The default is `nil`.
        public var metricsHandler: (@Sendable (RequestMetrics) -> Void)?
        /// Receives a span for each HTTP attempt made under a `TraceContext` (see
        /// `MomentsTracer`); every such attempt carries `traceparent` whether or not a
        /// tracer is set. The default is `nil`.
        public var tracer: (any MomentsTracer)?
        /// Makes the client's figures: `http.client.request.duration`, request and
        /// response body sizes, retries made and not made, the circuit breaker's state
        /// (see `MomentsMetricsFactory`; `PrometheusRegistry` is one). The default is `nil`.
        public var metrics: (any MomentsMetricsFactory)?
        /// Whether debug log records carry each exchange in full: the URL with its query,
        /// every header and both bodies whole, credentials still redacted. Off, they
        /// carry compact bodies of at most 1 KiB. The default is `false`.
        public var logsFullExchanges: Bool = false

        /// Creates a configuration with every default.
        public init(baseURL: URL) {
            self.baseURL = baseURL
        }

        /// Creates a configuration, then lets `configure` adjust it.
        ///
        /// ```swift
        /// let configuration = HTTPClient.Configuration(baseURL: url) { $0.timeout = .seconds(5) }
        /// ```
        package init(baseURL: URL, configure: (inout Configuration) -> Void) {
            self.init(baseURL: baseURL)
            configure(&self)
        }
    }
}
