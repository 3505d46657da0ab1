import Foundation
import MomentsSupport
import MomentsHTTP

/// Where a cacheable answer is kept, and the identity it belongs to.
struct CacheSlot: Sendable {
    let key: CacheKey
    let identity: RequestIdentity
}

extension HTTPClient {
    // MARK: - The network

    /// Sends `httpRequest` through the client's stages, decodes the answer, and caches a
    /// successful one under the identity it was actually sent with.
    ///
    /// A download goes to a file beside its destination and replaces the destination only
    /// once the answer is accepted: a failure of any kind leaves the destination as it was.
    /// Every credential value the request sent is removed from the text of its error and
    /// of its log record.
    nonisolated(nonsending) func fetch<R: Request>(
        _ request: R, _ httpRequest: HTTPRequest, options: RequestOptions, key: CacheSlot?, started: ContinuousClock.Instant
    ) async throws -> DecodedResponse<R.Response> {
        let record = CallRecord(keepsIdentity: key != nil)
        let download = httpRequest.destination.map(PartialDownload.init(replacing:))
        defer { download?.discard() }
        var sending = httpRequest
        sending.destination = download?.partial
        // A file upload or download is never shared: each caller has its own file.
        let coalesces = options.isCacheable(for: request.method) && configuration.coalescesRequests
            && httpRequest.streamedBody == nil && httpRequest.destination == nil
        let call = Call(
            context: RequestContext(requestType: R.self, allowsRetry: httpRequest.isRepeatable, priority: options.priority),
            started: started, deadline: started + httpRequest.timeout, isRepeatable: httpRequest.isRepeatable,
            hedges: options.hedges, coalesces: coalesces, middlewares: options.middlewares, origin: origins.base, record: record
        )
        do {
            let response = try await tracked(sending, call, latestWinsKey: options.latestWinsKey, groups: options.groups)
            let value = try decode(response, for: request, download: download)
            if let key, let cache = configuration.cache, record.lastIdentity == key.identity {
                await cache.store(CachedResponse(response, storedAt: clock.date, timeToLive: options.cacheTTL ?? configuration.cacheTTL), for: key.key)
            }
            let duration = clock.now - started
            if recorder.isActive {
                recorder.record(name: "\(R.self)", request: httpRequest, duration: duration, response: response,
                                attempts: record.attempts, fromCache: false, error: nil, secrets: record.secrets)
            }
            return DecodedResponse(value: value, statusCode: response.statusCode, headers: response.headers,
                                   body: response.body, duration: duration, sentAt: started,
                                   httpVersion: response.httpVersion)
        } catch {
            var failure = TransportStage.clientError(error)
                .attaching(method: httpRequest.method, url: httpRequest.url).redacting(record.secrets)
            if let download {
                // The caller named the destination; the partial file beside it is ours.
                failure = failure.replacing(download.partial.path, with: "\(download.destination.path) (written first to \(download.partial.lastPathComponent))")
            }
            if failure.retriesStopped == nil { failure.retriesStopped = record.retriesStopped }
            recordFailure(R.self, httpRequest, started: started, error: failure, attempts: max(1, record.attempts), secrets: record.secrets)
            throw failure
        }
    }

    nonisolated func recordFailure<R>(
        _ type: R.Type, _ request: HTTPRequest, started: ContinuousClock.Instant, error: HTTPClientError,
        attempts: Int = 0, secrets: SentSecrets? = nil
    ) {
        guard recorder.isActive else { return }
        recorder.record(name: "\(R.self)", request: request, duration: clock.now - started, response: nil, attempts: attempts,
                        fromCache: false, error: error, secrets: secrets)
    }

    /// Sends `request` through the client's stages in the call's own task (see
    /// ``CallTask``), registered so ``cancelAll()`` and latest-wins can cancel it.
    private nonisolated(nonsending) func tracked(
        _ request: HTTPRequest, _ call: Call, latestWinsKey: String?, groups: Set<String>
    ) async throws -> HTTPResponse {
        guard let id = inFlight.register(call.task, latestWinsKey: latestWinsKey, groups: groups) else {
            throw HTTPClientError.shutDown()
        }
        defer { inFlight.unregister(id, latestWinsKey: latestWinsKey, groups: groups) }
        return try await pipeline.send(request, call)
    }

    /// The answer as the caller gets it; a download's file replaces its destination only
    /// when the answer is accepted.
    nonisolated func decode<R: Request>(_ response: HTTPResponse, for request: R, download: PartialDownload?) throws -> R.Response {
        guard let download, let file = response.bodyFile else { return try decodeInMemory(response, for: request) }
        // What the caller is told of an answer it does not get: its beginning.
        var excerpt = response
        excerpt.body = (try? FileHandle(forReadingFrom: file)).flatMap { handle in
            defer { try? handle.close() }
            return try? handle.read(upToCount: 64 << 10)
        } ?? Data()
        excerpt.bodyFile = nil
        guard configuration.acceptedStatusCodes.contains(response.statusCode) else {
            throw request.failure(for: excerpt, decoder: configuration.decoder) ?? .serverError(excerpt)
        }
        if let failure = request.failure(forAccepted: excerpt, decoder: configuration.decoder) { throw failure }
        var committed = response
        committed.bodyFile = try download.commit()
        return try decodeInMemory(committed, for: request)
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
