import Foundation
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// Refreshing a timeline: one call per user at a time, its answer applied under the
/// ordering rule, emitted, then persisted; and timelines read back from persistence.
extension MomentsStore {
    /// Fetches `userID`'s timeline from the service, applies it under the ordering rule,
    /// emits what changed, and persists it.
    ///
    /// Persisted state is emitted first, if none was in memory. Concurrent refreshes of
    /// one user share a single fetch. A caller's cancellation never fails the others: the
    /// fetch stops when its caller is cancelled, and a caller still waiting fetches again;
    /// once every caller has been cancelled, nothing is fetched.
    ///
    /// - Parameters:
    ///   - userID: The user whose timeline to fetch.
    ///   - source: Where the service may take the timeline from (for the BFF's
    ///     `GraphQLMomentsService`, its client's response cache). The default is
    ///     ``TimelineSource/server``. With ``TimelineSource/cacheThenServer`` the cached
    ///     timeline is applied first, then the server's. A cached timeline is of unknown
    ///     age: it fills in a timeline the store lacks, but never replaces what the store
    ///     holds.
    /// - Returns: The timeline as subscribers now see it.
    /// - Throws: The service's error (an `HTTPClientError` for `GraphQLMomentsService`),
    ///   ``MomentsStoreError`` for an answer the store refuses, `CancellationError` if the
    ///   calling task is cancelled; the streams and the persisted state then keep the
    ///   last good state. A ``PersistenceError`` if the answer could not be persisted (it
    ///   is still applied and emitted, and persisted with the next write).
    ///   ``MomentsStoreError/Code-swift.struct/shutDown`` once ``shutdown(gracePeriod:)``
    ///   has begun.
    @discardableResult
    public func refresh(userID: String, source: TimelineSource = .server) async throws -> MomentsDetails {
        try checkRunning(userID)
        guard instruments.isTracing else { return try await sharedRefresh(userID, source: source) }
        return try await TraceContext.span("moments.store.refresh", tracer: instruments.tracer) { span in
            span?.setAttribute("moments.user_id", .string(userID))
            return try await sharedRefresh(userID, source: source)
        }
    }

    /// A refresh shared with the concurrent refreshes of `userID`.
    private func sharedRefresh(_ userID: String, source: TimelineSource) async throws -> MomentsDetails {
        do {
            return try await refreshes.run(userID) { try await performRefresh(userID, source: source) }
        } catch where Task.isCancelled {
            throw CancellationError()
        }
    }

    private func performRefresh(_ userID: String, source: TimelineSource) async throws -> MomentsDetails {
        beginActivity()
        var request: StoreCore.RequestID?
        defer {
            core.endRefresh(of: userID, request: request)
            if !persistenceFailures.isEmpty { persistenceFailures[userID] = nil }
            endActivity()
        }
        let number = nextNumber()
        request = number
        let began = instant
        let started: StoreInstant
        // The refresh's beginning, end and outcome are the owner's to publish.
        feed.publish(.refreshStarted(userID: userID))
        if core.beginRefresh(of: userID, request: number, at: began) {
            do {
                _ = try await loadIfNeeded(userID)
            } catch {
                // A damaged persisted timeline is replaced by the server's answer below.
                log(.warning, "the persisted timeline cannot be read; refreshing from the service", userID: userID, error: error)
            }
            started = instant
            note(.refreshSent(userID: userID, request: number), at: started)
        } else {
            started = began
        }
        var last: MomentsDetails?
        do {
            if source.answersTwice {
                try await service.refreshAnswers(userID: userID, source: source, withLikes: configuration.withLikes) { answer in
                    try await self.receiveRefreshAnswer(answer, for: userID, sent: started, source: source)
                }
            } else {
                let answer = try await service.refreshAnswer(userID: userID, source: source, withLikes: configuration.withLikes)
                try await receiveRefreshAnswer(consume answer, for: userID, sent: started, source: source)
            }
            last = state.displayedTimeline(userID)
        } catch {
            feed.publish(.refreshFailed(userID: userID, error: error))
            throw error
        }
        if !persistenceFailures.isEmpty, let failure = persistenceFailures[userID] {
            feed.publish(.refreshFailed(userID: userID, error: failure))
            throw failure
        }
        guard let last else {
            let failure = MomentsStoreError(code: .noAnswer, userID: userID, momentID: "")
            feed.publish(.refreshFailed(userID: userID, error: failure))
            throw failure
        }
        feed.publish(.refreshFinished(userID: userID))
        return last
    }

    private func receiveRefreshAnswer(_ answer: consuming MomentsAnswer, for userID: String, sent: StoreInstant, source: TimelineSource) async throws {
        let now = instant
        let reading = keepsConfirmationIntervals && answer.origin != .cache
            ? ClockReading(configuration.clock, margin: configuration.clockSkewTolerance / 2) : nil
        // The answer is moved into the event, not copied.
        let performed = act(.refreshAnswered(userID: userID, answer: consume answer, sent: sent, source: source), at: now, reading: reading)
        if let refusal = performed.refusal { throw refusal }
        do {
            // Untraced (the common case), the writer is awaited without the span's frame.
            if instruments.isTracing {
                try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in try await writer.wait(for: performed.ticket) }
            } else {
                try await writer.wait(for: performed.ticket)
            }
        } catch {
            persistenceFailures[userID] = error
        }
    }

    // MARK: - Reading back

    /// The timeline from memory, or loaded from persistence once; whether there is one.
    /// Callers arriving while it loads wait until it is applied.
    ///
    /// Persistence is read only once it holds everything memory held: queued writes
    /// first, and what failed writes left out written again. If that write fails, the
    /// read fails too: a timeline read from behind memory would make the store's later
    /// writes leave out what differs from it, and the retried write would then put
    /// older values back.
    func loadIfNeeded(_ userID: String) async throws -> Bool {
        if core.markUsed(userID) { return true }
        if let running = loading[userID] { return try await running.value }
        let persistence = self.persistence
        let writer = self.writer
        let task = Task { () async throws -> Bool in
            try await writer.catchUp()  // read what was written, even for a timeline evicted meanwhile
            let loaded = try await persistence.load(userID: userID)
            return try self.applyLoaded(loaded, for: userID)
        }
        loading[userID] = task
        defer { loading[userID] = nil }
        return try await task.value
    }

    private func applyLoaded(_ loaded: MomentsDetails?, for userID: String) throws -> Bool {
        if let refusal = act(.loaded(userID: userID, details: loaded)).refusal { throw refusal }
        return state.timelines[userID] != nil
    }

    func loadForSubscriber(_ userID: String) async {
        do {
            _ = try await loadIfNeeded(userID)
        } catch {
            log(.error, "the persisted timeline cannot be read for a new subscriber", userID: userID, error: error)
        }
    }
}
