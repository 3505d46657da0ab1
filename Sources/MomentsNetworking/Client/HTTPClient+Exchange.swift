import Foundation
import MomentsSupport
import MomentsHTTP

/// Where a cacheable answer is kept, and the identity it belongs to.
struct CacheSlot: Sendable {
    let key: CacheKey
    let identity: RequestIdentity
}

/// What one call sent: the credential values (to redact) and the identity of its last
/// request (to cache its answer under).
final class SentRequests: Sendable {
    let secrets = SentSecrets()
    /// Whether the identity of what is sent is needed (to key a cached answer); the
    /// digest is not computed otherwise.
    let keepsIdentity: Bool
    private let identity = PThreadMutex<RequestIdentity?>(nil)

    init(keepsIdentity: Bool) {
        self.keepsIdentity = keepsIdentity
    }

    func record(_ identity: RequestIdentity) {
        self.identity.withLock { $0 = identity }
    }

    var lastIdentity: RequestIdentity? { identity.withLock { $0 } }
}

/// One network exchange's final answer and how many attempts it took.
struct Exchange: Sendable {
    let response: HTTPResponse
    let attempts: Int
    /// When the first attempt began.
    let startedAt: ContinuousClock.Instant
    /// Why a failure status that could have been retried was not.
    var retriesStopped: RetryStop?
}

extension HTTPClient {
    // MARK: - The network

    /// Sends over the network, decodes, and caches a successful answer, under the
    /// identity it was actually sent with.
    ///
    /// Every credential value the request sent is removed from the text of its error
    /// and of its log record.
    nonisolated func fetch<R: Request>(
        _ request: R, _ httpRequest: HTTPRequest, options: RequestOptions, key: CacheSlot?, started: ContinuousClock.Instant
    ) async throws -> DecodedResponse<R.Response> {
        var exchange: Exchange?
        let sent = SentRequests(keepsIdentity: key != nil)
        do {
            let context = RequestContext(requestType: R.self, allowsRetry: options.allowsRetry(for: request.method), priority: options.priority)
            let middlewares = options.middlewares
            // A file upload or download is never shared: each caller has its own file.
            let coalesces = options.isCacheable(for: request.method) && configuration.coalescesRequests
                && httpRequest.streamedBody == nil && httpRequest.destination == nil
            let result = try await tracked(latestWinsKey: options.latestWinsKey, groups: options.groups) {
                try await self.exchangeWithRetry(
                    httpRequest, context: context, middlewares: middlewares, sent: sent, coalesces: coalesces, hedges: options.hedges
                )
            }
            exchange = result
            let value = try decode(result.response, for: request, sentAs: httpRequest)
            if let key, let cache = configuration.cache, sent.lastIdentity == key.identity {
                await cache.store(CachedResponse(result.response, storedAt: configuration.now(), timeToLive: options.cacheTTL ?? configuration.cacheTTL), for: key.key)
            }
            if recorder.isActive {
                recorder.record(name: "\(R.self)", request: httpRequest, started: started, response: result.response,
                                attempts: result.attempts, fromCache: false, error: nil, secrets: sent.secrets)
            }
            return DecodedResponse(value: value, statusCode: result.response.statusCode, headers: result.response.headers,
                                   body: result.response.body, duration: ContinuousClock.now - started, sentAt: result.startedAt,
                                   httpVersion: result.response.httpVersion)
        } catch {
            // A download that fails leaves no file (a redirect refused, say, after its
            // body was written).
            if let destination = httpRequest.destination { try? FileManager.default.removeItem(at: destination) }
            let normalized = (error as? HTTPClientError) ?? (Task.isCancelled || error is CancellationError
                ? .cancelled()
                : .transportFailure(TransportFailure(kind: .other, message: String(describing: error))))
            var attached = normalized.attaching(method: httpRequest.method, url: httpRequest.url).redacting(sent.secrets)
            if attached.retriesStopped == nil { attached.retriesStopped = exchange?.retriesStopped }
            recordFailure(R.self, httpRequest, started: started, error: attached, attempts: exchange?.attempts ?? 1, secrets: sent.secrets)
            throw attached
        }
    }

    nonisolated func recordFailure<R>(
        _ type: R.Type, _ request: HTTPRequest, started: ContinuousClock.Instant, error: HTTPClientError,
        attempts: Int = 0, secrets: SentSecrets? = nil
    ) {
        guard recorder.isActive else { return }
        recorder.record(name: "\(R.self)", request: request, started: started, response: nil, attempts: attempts,
                        fromCache: false, error: error, secrets: secrets)
    }

    /// Runs `operation` in a task of its own, so ``cancelAll()`` and latest-wins can cancel it.
    ///
    /// The task starts at once on the calling thread (`Task.immediate`) and runs there
    /// up to its first suspension: no thread is woken to start it, and an answer that
    /// needs no waiting completes before the caller would suspend.
    private nonisolated func tracked<T: Sendable>(
        latestWinsKey: String?, groups: Set<String>,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let task = Task.immediate { try await operation() }
        let id = inFlight.register(latestWinsKey: latestWinsKey, groups: groups) { task.cancel() }
        defer { inFlight.unregister(id, latestWinsKey: latestWinsKey, groups: groups) }
        return try await withTaskCancellationHandler { try await task.value } onCancel: { task.cancel() }
    }

    nonisolated func exchangeOnce(
        _ request: HTTPRequest, context: RequestContext, middlewares: [any HTTPMiddleware], sent: SentRequests, coalesces: Bool
    ) async throws -> HTTPResponse {
        var chain = configuration.middlewares + middlewares
        if let authentication = configuration.authentication { chain.append(authentication) }
        let terminal: @Sendable (HTTPRequest) async throws -> HTTPResponse = { request in
            try await self.sendAsBuilt(request, priority: context.priority, sent: sent, coalesces: coalesces)
        }
        if chain.isEmpty { return try await terminal(request) }
        return try await MiddlewareChain.run(request, context: context, middlewares: chain, terminal: terminal)
    }

    /// The request as every middleware left it: its identity and secrets are noted,
    /// and identical requests (identity included) in flight share one exchange.
    private nonisolated func sendAsBuilt(
        _ request: HTTPRequest, priority: RequestPriority, sent: SentRequests, coalesces: Bool
    ) async throws -> HTTPResponse {
        sent.secrets.collect(from: request.headers, names: identityNames)
        guard coalesces || sent.keepsIdentity else { return try await send(request, priority: priority) }
        let identity = RequestIdentity(request.headers, names: identityNames, key: identityKey)
        sent.record(identity)
        guard coalesces else { return try await send(request, priority: priority) }
        do {
            return try await coalescer.run(CoalescingKey(request, identity: identity)) {
                try await self.send(request, priority: priority)
            }
        } catch is CancellationError {
            throw HTTPClientError.cancelled()
        }
    }

    /// Sends through the transport if the circuit breaker lets it, within the
    /// concurrency limit, following redirects under the ``RedirectPolicy``, normalizing
    /// every failure to `HTTPClientError`; the outcome is counted by the breaker.
    private nonisolated func send(_ request: HTTPRequest, priority: RequestPriority) async throws -> HTTPResponse {
        let admitted = ContinuousClock.now
        let isProbe: Bool
        switch origin.admit(now: admitted) {
        case .allowed(let probe): isProbe = probe
        case .rejected(let until): throw HTTPClientError.circuitOpen(retryAfter: max(.zero, until - admitted))
        }
        do {
            if let limiter {
                try await limiter.acquire(priority: priority, deadline: admitted + request.timeout)
            }
            defer { limiter?.release() }
            var current = request
            var redirects = RedirectChain(origin: request, policy: configuration.redirectPolicy, identityNames: identityNames)
            while true {
                let started = ContinuousClock.now
                let (traced, span) = instruments.beginAttempt(current, resend: 0)
                let response: HTTPResponse
                do {
                    response = try await sendOnce(traced)
                } catch let error as HTTPClientError {
                    instruments.endAttempt(traced, span: span, started: started, response: nil, error: error)
                    throw error
                }
                instruments.endAttempt(traced, span: span, started: started, response: response, error: nil)
                guard let next = try redirects.follow(response, after: current) else {
                    origin.record(outcome(of: response), isProbe: isProbe)
                    instruments.setBreaker(origin.breakerPhase)
                    if (200..<300).contains(response.statusCode) { origin.recordLatency(ContinuousClock.now - started) }
                    return response
                }
                current = next
            }
        } catch let error as HTTPClientError {
            origin.record(error.code == .transportFailure ? .failure(retryAfter: nil) : .ignored, isProbe: isProbe)
            instruments.setBreaker(origin.breakerPhase)
            throw error
        }
    }

    /// How the circuit breaker counts `response`.
    private nonisolated func outcome(of response: HTTPResponse) -> CircuitBreakerState.Outcome {
        guard let policy = origin.breakerPolicy, policy.failureStatusCodes.contains(response.statusCode) else { return .success }
        return .failure(retryAfter: response.headers["Retry-After"].flatMap { RetryAfter.parse($0, now: Date()) })
    }

    private nonisolated func sendOnce(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as HTTPClientError {
            throw error
        } catch {
            throw Task.isCancelled || error is CancellationError
                ? HTTPClientError.cancelled()
                : HTTPClientError.transportFailure(TransportFailure(kind: .other, message: String(describing: error)))
        }
        return try completed(response, of: request)
    }

    /// What the client does for every transport, whatever the transport did itself: the
    /// size limit is checked, a download answered in memory is written to its file, and
    /// a transfer whose transport reported no progress is told its whole exchange.
    private nonisolated func completed(_ response: HTTPResponse, of request: HTTPRequest) throws(HTTPClientError) -> HTTPResponse {
        if let limit = request.maximumResponseSize, response.body.count > limit {
            throw HTTPClientError.responseTooLarge(limit: limit, received: response.body.count)
        }
        TransferProgressReporter.current?.exchangeEnded(sent: request.bodyLength, received: Int64(response.body.count))
        guard let destination = request.destination, response.bodyFile == nil else { return response }
        var written = response
        try DownloadFile.write(response.body, to: destination)
        written.body = Data()
        written.bodyFile = destination
        return written
    }

    nonisolated func decode<R: Request>(_ response: HTTPResponse, for request: R, sentAs httpRequest: HTTPRequest) throws -> R.Response {
        guard let file = response.bodyFile else { return try decodeInMemory(response, for: request) }
        do {
            return try decodeInMemory(response, for: request)
        } catch {
            // A download the caller does not get is removed; its beginning says why.
            var failed = response
            failed.body = (try? FileHandle(forReadingFrom: file)).flatMap { handle in
                defer { try? handle.close() }
                return try? handle.read(upToCount: 64 << 10)
            } ?? Data()
            failed.bodyFile = nil
            try? FileManager.default.removeItem(at: file)
            guard !configuration.acceptedStatusCodes.contains(response.statusCode) else { throw error }
            // The server's failure, told with the beginning of what it sent.
            _ = try decodeInMemory(failed, for: request)
            throw error
        }
    }

    private nonisolated func decodeInMemory<R: Request>(_ response: HTTPResponse, for request: R) throws -> R.Response {
        guard configuration.acceptedStatusCodes.contains(response.statusCode) else {
            throw request.failure(for: response, decoder: configuration.decoder) ?? .serverError(response)
        }
        if let failure = request.failure(forAccepted: response, decoder: configuration.decoder) { throw failure }
        do {
            return try request.decodeResponse(response, decoder: configuration.decoder)
        } catch let error as HTTPClientError {
            throw error
        } catch {
            throw HTTPClientError.decodingFailed(R.Response.self, error: error, response: response)
        }
    }
}
