import MomentsSupport
public import Foundation
public import MomentsHTTP

/// Sends ``Request``s to one API and decodes their answers.
///
/// For example:
/// ```swift
/// let client = HTTPClient(baseURL: URL(string: "https://bff.example.com")!)
/// let user = try await client.send(GetUser(id: "42"))
/// ```
///
/// Every failure is an `HTTPClientError`. Requests run concurrently: sending does not
/// wait for other requests of the same client, and decoding runs off the actor.
///
/// A call goes through the client's cache policy, then through one stage per rule, each
/// keeping one promise: retries within a budget (a request that is not repeatable is sent
/// again only when nothing of it can have reached the server), hedging, middlewares and
/// authentication, coalescing, the concurrency limit, redirects, the circuit breaker of
/// the origin it goes to, and the transport. One deadline, read from the configuration's ``Configuration-swift.struct/clock``,
/// bounds all of it: the wait for a slot, every attempt, backoff, hedge and redirect hop.
///
/// Its members are `nonisolated`, and its per-origin state (circuit breakers, retry
/// budgets, latency, the concurrency limit, calls in flight) is held behind locks rather
/// than isolated to the actor: a call consults it several times, often from many tasks
/// at once, and as actor state each consultation would be a hop onto the client's
/// executor. Each lock is held only for a few field updates and never across an `await`.
public actor HTTPClient {
    /// How this client builds, sends and checks requests.
    public nonisolated let configuration: Configuration
    /// What sends the requests.
    package nonisolated let transport: any HTTPTransport
    nonisolated let inFlight = InFlightRequests()
    nonisolated let coalescer = SingleFlight<CoalescingKey, HTTPResponse>()
    /// The headers that say who a request speaks for.
    nonisolated let identityNames: IdentityHeaderNames
    /// The key of identity digests: the cache's, so keys agree across clients sharing it.
    nonisolated let identityKey: [UInt8]
    /// The breaker, retry budget and latency of each origin the client talks to.
    nonisolated let origins: OriginGuards
    /// Spans and figures of each attempt.
    nonisolated let instruments: ClientInstruments
    nonisolated let recorder: RequestRecorder
    /// The base URL as text without trailing slashes, computed once for every request.
    nonisolated let baseURLPrefix: String
    /// The stages every call's requests go through, outermost first.
    nonisolated let pipeline: CallPipeline
    /// The limit of ``Configuration-swift.struct/maximumConcurrentRequests``, if set.
    nonisolated let limiter: ConcurrencyLimiter?
    /// The URL of the last path without a query that a call went to.
    nonisolated let lastURL = PThreadMutex<(path: String, url: URL)?>(nil)
    /// Where the client reads the time.
    nonisolated var clock: any MomentsClock { configuration.clock }

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: How requests are built, sent and checked.
    ///   - transport: What sends them. The default is a new ``URLSessionTransport``.
    public init(configuration: Configuration, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        self.transport = transport
        let clock = configuration.clock
        let instruments = ClientInstruments(configuration: configuration)
        self.instruments = instruments
        let origins = OriginGuards(baseURL: configuration.baseURL) {
            OriginGuard(breaker: configuration.circuitBreaker, budget: configuration.retryBudget, hedging: configuration.hedging, now: clock.now)
        }
        self.origins = origins
        self.recorder = RequestRecorder(configuration: configuration)
        let identityNames = IdentityHeaderNames(
            configured: configuration.identityHeaders, authenticationHeader: configuration.authentication?.headerName
        )
        self.identityNames = identityNames
        let identityKey = configuration.cache?.identityKey ?? processIdentityKey
        self.identityKey = identityKey
        var prefix = configuration.baseURL.absoluteString
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.baseURLPrefix = prefix

        var stages: [any CallStage] = [
            RetryStage(policy: configuration.retryPolicy, attemptTimeout: configuration.attemptTimeout, clock: clock, instruments: instruments),
        ]
        if configuration.hedging != nil {
            // An answer the breaker counts as failure, or the retry stage would retry, does
            // not win a race: the call's task, cancelled by a winning hedge, must have
            // nothing left to do but return it.
            let breakerFailures = configuration.circuitBreaker?.failureStatusCodes ?? [429, 500, 502, 503, 504]
            let retried = configuration.retryPolicy?.retryableStatusCodes ?? []
            stages.append(HedgeStage(clock: clock, failureStatuses: breakerFailures.union(retried)))
        }
        stages.append(MiddlewareStage(configured: configuration.middlewares, authentication: configuration.authentication))
        stages.append(CoalescingStage(coalescer: coalescer, identityNames: identityNames, identityKey: identityKey))
        limiter = configuration.maximumConcurrentRequests.map {
            ConcurrencyLimiter(limit: $0, maximumQueued: configuration.maximumQueuedRequests, clock: clock)
        }
        if let limiter { stages.append(ConcurrencyLimitStage(limiter: limiter)) }
        stages.append(RedirectStage(policy: configuration.redirectPolicy, identityNames: identityNames, origins: origins))
        stages.append(BreakerStage(clock: clock, instruments: instruments, origins: origins))
        stages.append(TransportStage(transport: transport, clock: clock, deadlineHeader: configuration.deadlineHeader, instruments: instruments))
        self.pipeline = CallPipeline(stages)
    }

    /// Creates a client for `baseURL`, letting `configure` adjust the defaults.
    public init(
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        configure: (inout Configuration) -> Void = { _ in }
    ) {
        self.init(configuration: Configuration(baseURL: baseURL, configure: configure), transport: transport)
    }

    /// Sends `request` and returns its decoded answer.
    ///
    /// - Throws: `HTTPClientError`.
    public nonisolated func send<R: Request>(_ request: R) async throws -> R.Response {
        try await response(for: request).value
    }

    /// Sends `request` and returns its decoded answer with the status, headers and
    /// duration of the exchange, and whether it came from the cache.
    ///
    /// The request's cache policy (or the client's) decides whether the cache, the
    /// network, or both are used.
    ///
    /// - Throws: `HTTPClientError`.
    public nonisolated func response<R: Request>(for request: R) async throws -> DecodedResponse<R.Response> {
        let started = clock.now
        let options = request.options  // read once per call: a request may make it on each read
        let httpRequest = try makeHTTPRequest(for: request, options: options)
        let policy = options.cachePolicy ?? configuration.cachePolicy
        // With no cache, every policy but `.local` comes to the network's answer: the call
        // goes straight to it, without the cache's steps.
        if configuration.cache == nil, policy != .local {
            return try await fetch(request, httpRequest, options: options, key: nil, started: started)
        }
        return try await resolve(request, httpRequest, options: options, policy: policy, started: started)
    }

    /// Shuts the client down gracefully; returns once it is shut down.
    ///
    /// From the moment it is called, every new call fails with
    /// `HTTPClientError.Code.shutDown` and sends nothing. Requests in flight are let
    /// finish for at most `gracePeriod` on the configuration's clock; those still in
    /// flight then are cancelled (each fails with `HTTPClientError.Code.cancelled`).
    /// Then the transport is shut down (`HTTPTransport.shutdown()`): when this returns,
    /// `CurlTransport`'s thread has ended and its connections are closed. Idempotent and
    /// safe from any task: a second call waits for the first to end.
    ///
    /// A client shared by several owners (a store's service and other callers) is shut
    /// down by the last of them, after the others.
    public nonisolated func shutdown(gracePeriod: Duration = .seconds(10)) async {
        guard await inFlight.beginClosing() else { return }
        if await !inFlight.waitUntilEmpty(until: clock.now + gracePeriod, on: clock) {
            inFlight.cancelAll()
            _ = await inFlight.waitUntilEmpty(until: nil, on: clock)
        }
        await transport.shutdown()
        inFlight.finishClosing()
    }

    /// Runs until the calling task is cancelled or ``shutdown(gracePeriod:)`` is called,
    /// then shuts the client down gracefully (with the default grace period) and returns.
    ///
    /// The shape of swift-service-lifecycle's `Service`: `extension HTTPClient: Service {}`.
    public nonisolated func run() async throws {
        await inFlight.waitUntilClosingOrCancelled()
        await shutdown()
    }

    /// Cancels every request of this client in flight; each fails with
    /// `HTTPClientError.Code.cancelled`.
    public nonisolated func cancelAll() {
        inFlight.cancelAll()
    }

    /// Removes every answer from this client's cache (nothing if it has none): after
    /// a logout, or to start an app-lifetime cache afresh.
    ///
    /// - Throws: the cache's error if it could not be cleared.
    public nonisolated func clearCache() async throws {
        try await configuration.cache?.clear()
    }

    /// Cancels the requests of this client in flight that belong to `group` (see
    /// ``RequestOptions/groups``); the others go on. Each cancelled one fails with
    /// `HTTPClientError.Code.cancelled`.
    public nonisolated func cancelAll(in group: String) {
        inFlight.cancelAll(in: group)
    }

    /// The number of requests of this client in flight.
    public nonisolated var requestsInFlight: Int { inFlight.count }

    /// The number of requests of this client in flight in `group`.
    public nonisolated func requestsInFlight(in group: String) -> Int { inFlight.count(in: group) }

    /// Returns once exactly `count` requests of this client are in flight (at once if
    /// they are now): what a test waits for instead of polling ``requestsInFlight``.
    package nonisolated func waitUntilRequestsInFlight(are count: Int) async {
        await inFlight.waitUntilCount(is: count)
    }

    /// How many requests wait for a slot under
    /// ``Configuration-swift.struct/maximumConcurrentRequests`` (for tests).
    package nonisolated var requestsWaitingForASlot: Int { limiter?.waiting ?? 0 }

    /// Returns once exactly `count` requests wait for a slot (at once if they do now):
    /// what a test waits for instead of polling ``requestsWaitingForASlot``. A client
    /// without a limit has no queue: it returns at once.
    package nonisolated func waitUntilRequestsWaitingForASlot(are count: Int) async {
        await limiter?.waitUntilWaiting(are: count)
    }

    /// How many calls wait on shared (coalesced) exchanges in flight (for tests).
    package nonisolated var callersOfSharedExchanges: Int { coalescer.waitingCallers }

    // MARK: - Steps

    /// Validates `request` and builds what the transport sends.
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` or
    ///   `HTTPClientError.Code.cancelled`.
    package nonisolated func makeHTTPRequest<R: Request>(for request: R) throws -> HTTPRequest {
        try makeHTTPRequest(for: request, options: request.options)
    }

    /// Validates `request`, whose options are `options`, and builds what the transport
    /// sends.
    nonisolated func makeHTTPRequest<R: Request>(for request: R, options: RequestOptions) throws -> HTTPRequest {
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        do {
            try request.validate()
        } catch {
            throw HTTPClientError.invalidRequest("\(R.self) is invalid: \(error)", underlyingError: error)
        }
        if R.Response.self == URL.self, options.downloadDestination == nil {
            throw HTTPClientError.invalidRequest("\(R.self) answers with a file but names no downloadDestination")
        }
        let url = try makeURL(path: request.path, query: request.query)
        var headers = configuration.defaultHeaders
        var bodyData: Data?
        var streamedBody: StreamedBody?
        if let body = request.body {
            if body.isStreamed {
                streamedBody = try body.streamedBody()
            } else {
                do {
                    bodyData = try body.encoded(with: configuration.encoder)
                } catch {
                    throw HTTPClientError.invalidRequest("the body of \(R.self) could not be encoded: \(error)", underlyingError: error)
                }
            }
            if let contentType = body.contentType { headers["Content-Type"] = contentType }
        }
        return HTTPRequest(
            method: request.method,
            url: url,
            headers: headers.merging(request.headers),
            body: bodyData,
            streamedBody: streamedBody,
            timeout: options.timeout ?? configuration.timeout,
            maximumResponseSize: configuration.maximumResponseSize,
            destination: options.downloadDestination,
            isRepeatable: options.allowsRetry(for: request.method)
        )
    }

    private nonisolated func makeURL(path: String, query: [URLQueryItem]) throws -> URL {
        // Most calls go to the path the one before went to (every GraphQL call to
        // "/graphql"): its URL is made once, not parsed again on every call.
        if query.isEmpty, let known = lastURL.withLock({ $0?.path == path ? $0?.url : nil }) { return known }
        let url = try parseURL(path: path, query: query)
        if query.isEmpty { lastURL.withLock { $0 = (path, url) } }
        return url
    }

    private nonisolated func parseURL(path: String, query: [URLQueryItem]) throws -> URL {
        let separator = path.hasPrefix("/") ? "" : "/"
        guard var components = URLComponents(string: baseURLPrefix + separator + path) else {
            throw HTTPClientError.invalidRequest("the path '\(path)' does not form a valid URL; place identifiers with \"\\(segment: id)\"")
        }
        if !query.isEmpty {
            components.queryItems = (components.queryItems ?? []) + query
            // URLComponents leaves "+" alone, which servers read as a space.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
        }
        guard let url = components.url else {
            throw HTTPClientError.invalidRequest("the path '\(path)' does not form a valid URL")
        }
        return url
    }
}
