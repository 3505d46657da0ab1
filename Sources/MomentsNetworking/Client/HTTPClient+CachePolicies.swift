import Foundation
import MomentsSupport
import MomentsHTTP

extension HTTPClient {
    // MARK: - Cache policies

    nonisolated func resolve<R: Request>(
        _ request: R, _ httpRequest: HTTPRequest, options: RequestOptions, policy: CachePolicy, started: ContinuousClock.Instant
    ) async throws -> DecodedResponse<R.Response> {
        let key = try await cacheSlot(for: request, httpRequest, options: options, started: started)
        switch policy {
        case .remote:
            return try await fetch(request, httpRequest, options: options, key: key, started: started)
        case .local:
            if let value = await cachedAnswer(request, httpRequest, key: key, freshOnly: true, started: started) {
                return value
            }
            let error = HTTPClientError.cacheMiss("no fresh cached answer, and the policy forbids the network")
                .attaching(method: httpRequest.method, url: httpRequest.url)
            recordFailure(R.self, httpRequest, started: started, error: error)
            throw error
        case .localOrRemote:
            if let value = await cachedAnswer(request, httpRequest, key: key, freshOnly: true, started: started) {
                return value
            }
            return try await fetch(request, httpRequest, options: options, key: key, started: started)
        case .localThenRemote:
            if let value = await cachedAnswer(request, httpRequest, key: key, freshOnly: false, started: started) {
                // The network answer replaces the cached one for the next read. The refresh
                // is a call of its own: cancelAll() cancels it, and its failure is logged.
                Task { _ = try? await self.fetch(request, httpRequest, options: options, key: key, started: self.clock.now) }
                return value
            }
            return try await fetch(request, httpRequest, options: options, key: key, started: started)
        case .remoteThenLocal:
            do {
                return try await fetch(request, httpRequest, options: options, key: key, started: started)
            } catch let error as HTTPClientError where fallsBackToCache(error) {
                guard let value = await cachedAnswer(request, httpRequest, key: key, freshOnly: false, started: started) else {
                    throw error
                }
                return value
            }
        }
    }

    /// The answers `request`'s cache policy (or the client's) allows, as they arrive:
    /// - `.remote`: the network's;
    /// - `.local`: the fresh cached one, or `HTTPClientError.Code.cacheMiss`;
    /// - `.localOrRemote`: the fresh cached one if there is one, else the network's;
    /// - `.localThenRemote`: the cached one (up to the maximum staleness) if any, then
    ///   the network's, which replaces it in the cache;
    /// - `.remoteThenLocal`: the network's, or if no answer came (a transport failure,
    ///   a timeout, a status in ``Configuration-swift.struct/cacheFallbackStatusCodes``),
    ///   the cached one.
    ///
    /// For example:
    /// ```swift
    /// for try await timeline in client.responses(for: GetMomentsByUserID(userID: "0", cachePolicy: .localThenRemote)) {
    ///     render(timeline.value)   // cached first (if any), then fresh
    /// }
    /// ```
    /// Cancelling the consuming task cancels the network request.
    public nonisolated func responses<R: Request>(for request: R) -> AsyncThrowingStream<DecodedResponse<R.Response>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.answers(for: request) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Hands `deliver` every answer `request`'s cache policy allows, as they arrive (see
    /// ``responses(for:)``).
    ///
    /// - Throws: `HTTPClientError`.
    package nonisolated func answers<R: Request>(
        for request: R, deliver: (DecodedResponse<R.Response>) async throws -> Void
    ) async throws {
        let started = clock.now
        let options = request.options
        let httpRequest = try makeHTTPRequest(for: request, options: options)
        let policy = options.cachePolicy ?? configuration.cachePolicy
        guard policy == .localThenRemote else {
            return try await deliver(resolve(request, httpRequest, options: options, policy: policy, started: started))
        }
        let key = try await cacheSlot(for: request, httpRequest, options: options, started: started)
        if let value = await cachedAnswer(request, httpRequest, key: key, freshOnly: false, started: started) {
            try await deliver(value)
        }
        try await deliver(fetch(request, httpRequest, options: options, key: key, started: clock.now))
    }

    /// Removes the cached answer `request` would be served, if any.
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` if the request is invalid.
    public nonisolated func removeCachedResponse<R: Request>(for request: R) async throws {
        guard let cache = configuration.cache else { return }
        let options = request.options
        let httpRequest = try makeHTTPRequest(for: request, options: options)
        guard let slot = try await cacheSlot(for: request, httpRequest, options: options, started: clock.now) else { return }
        await cache.removeResponse(for: slot.key)
    }

    /// Whether `.remoteThenLocal` may answer from the cache after `error`: only when no
    /// answer came (a transport failure, a timeout included), or the server said it could
    /// not answer now (``Configuration-swift.struct/cacheFallbackStatusCodes``, whatever the
    /// body, a GraphQL error envelope included). An answer that refuses the caller or
    /// says the resource is gone, an answer that does not decode or is too large, and a
    /// cancellation stand.
    private nonisolated func fallsBackToCache(_ error: HTTPClientError) -> Bool {
        if error.code == .transportFailure { return true }
        guard error.code == .serverError || error.code == .graphQLFailure, let status = error.statusCode else { return false }
        return configuration.cacheFallbackStatusCodes.contains(status)
    }

    /// Where a cacheable request's answer is kept, when a cache is configured and the
    /// request's identity can be known before sending it: the headers the client
    /// builds, then the authentication middleware's next token. A middleware that may
    /// add credentials makes the identity unknowable, and the request uncached.
    private nonisolated func cacheSlot<R: Request>(
        for request: R, _ httpRequest: HTTPRequest, options: RequestOptions, started: ContinuousClock.Instant
    ) async throws -> CacheSlot? {
        // A streamed body (a file) is never cached: its key would have to read it all.
        guard options.isCacheable(for: request.method), configuration.cache != nil, httpRequest.streamedBody == nil, httpRequest.destination == nil else { return nil }
        var headers = httpRequest.headers
        var middlewares = configuration.middlewares + options.middlewares
        if let authentication = configuration.authentication { middlewares.append(authentication) }
        do {
            for middleware in middlewares {
                switch try await middleware.identityContribution(for: httpRequest) {
                case .unchanged: continue
                case .unknowable: return nil
                case .adds(let fields): for field in fields { headers[field.name] = field.value }
                }
            }
        } catch {
            let failure = ((error as? HTTPClientError) ?? .middlewareFailure("identity of the request", error: error))
                .attaching(method: httpRequest.method, url: httpRequest.url)
            recordFailure(R.self, httpRequest, started: started, error: failure)
            throw failure
        }
        let identity = RequestIdentity(headers, names: identityNames, key: identityKey)
        return CacheSlot(key: CacheKey(httpRequest, identity: identity), identity: identity)
    }

    /// The cached answer for `key`, decoded: fresh only, or up to the maximum staleness.
    /// `nil` if there is none or it no longer decodes.
    private nonisolated func cachedAnswer<R: Request>(
        _ request: R, _ httpRequest: HTTPRequest, key: CacheSlot?, freshOnly: Bool, started: ContinuousClock.Instant
    ) async -> DecodedResponse<R.Response>? {
        guard let key, let cached = await configuration.cache?.cachedResponse(for: key.key) else { return nil }
        let now = clock.date
        let usable = freshOnly ? cached.isFresh(at: now) : cached.age(at: now) <= configuration.maximumStaleness.seconds
        guard usable else { return nil }
        let response = cached.response
        guard let value = try? request.decodeResponse(response, decoder: configuration.decoder) else { return nil }
        if recorder.isActive {
            recorder.record(name: "\(R.self)", request: httpRequest, duration: clock.now - started, response: response,
                            attempts: 0, fromCache: true, error: nil)
        }
        return DecodedResponse(value: value, statusCode: response.statusCode, headers: response.headers, body: response.body,
                               duration: clock.now - started, isFromCache: true)
    }
}
