import Foundation
public import MomentsNetworking
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
    ///   - cachePolicy: Where the service may take the answer from (for
    ///     ``GraphQLMomentsService``, its client's response cache). The default is
    ///     `.remote`: always the network. With `.localThenRemote` the cached timeline
    ///     is applied first, then the network's. A cached answer is of unknown age: it
    ///     fills in a timeline the store lacks, but never replaces what the store holds.
    /// - Returns: The timeline as subscribers now see it.
    /// - Throws: The service's error (an `HTTPClientError` for ``GraphQLMomentsService``),
    ///   ``MomentsStoreError`` for an answer the store refuses, `CancellationError` if the
    ///   calling task is cancelled; the streams and the persisted state then keep the
    ///   last good state. A ``PersistenceError`` if the answer could not be persisted (it
    ///   is still applied and emitted, and persisted with the next write).
    ///   ``MomentsStoreError/Code-swift.struct/shutDown`` once ``shutdown(gracePeriod:)``
    ///   has begun.
    @discardableResult
    public func refresh(userID: String, cachePolicy: CachePolicy = .remote) async throws -> MomentsDetails {
        try checkRunning(userID)
        guard instruments.isTracing else { return try await sharedRefresh(userID, cachePolicy: cachePolicy) }
        return try await TraceContext.span("moments.store.refresh", tracer: instruments.tracer) { span in
            span?.setAttribute("moments.user_id", .string(userID))
            return try await sharedRefresh(userID, cachePolicy: cachePolicy)
        }
    }

    /// A refresh shared with the concurrent refreshes of `userID`.
    private func sharedRefresh(_ userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        do {
            return try await refreshes.run(userID) { try await performRefresh(userID, cachePolicy: cachePolicy) }
        } catch where Task.isCancelled {
            throw CancellationError()
        }
    }

    private func performRefresh(_ userID: String, cachePolicy: CachePolicy) async throws -> MomentsDetails {
        beginActivity()
        defer {
            refreshBook.inFlight[userID] = nil
            if !refreshBook.persistenceFailures.isEmpty { refreshBook.persistenceFailures[userID] = nil }
            endActivity()
        }
        feed.publish(.refreshStarted(userID: userID))
        if !state.touch(userID) {
            refreshBook.inFlight[userID] = .loading
            do {
                _ = try await loadIfNeeded(userID)
            } catch {
                // A damaged persisted timeline is replaced by the server's answer below.
                log(.warning, "the persisted timeline cannot be read; refreshing from the service", userID: userID, error: error)
            }
        }
        let started = instant
        refreshBook.inFlight[userID] = .sent(started)
        let request = beginRequest(at: started)
        defer { endRequest(request) }
        var last: MomentsDetails?
        do {
            if cachePolicy == .localThenRemote {
                try await service.refreshAnswers(userID: userID, cachePolicy: cachePolicy, withLikes: configuration.withLikes) { answer in
                    try await self.receiveRefreshAnswer(answer, for: userID, callStarted: started, cachePolicy: cachePolicy)
                }
            } else {
                let answer = try await service.refreshAnswer(userID: userID, cachePolicy: cachePolicy, withLikes: configuration.withLikes)
                try await receiveRefreshAnswer(answer, for: userID, callStarted: started, cachePolicy: cachePolicy)
            }
            last = state.displayedTimeline(userID)
        } catch {
            feed.publish(.refreshFailed(userID: userID, error: error))
            throw error
        }
        if !refreshBook.persistenceFailures.isEmpty, let failure = refreshBook.persistenceFailures[userID] {
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

    private func receiveRefreshAnswer(
        _ answer: MomentsAnswer, for userID: String, callStarted: StoreInstant, cachePolicy: CachePolicy
    ) async throws {
        let (applied, evidence) = try apply(answer, for: userID, callStarted: callStarted, likeOf: nil)
        if applied.needsConvergence {
            switch answer.origin {
            case .server: scheduleConvergence(userID, since: evidence.received)
            // A cached answer is settled by the network when the policy allows it.
            case .cache where cachePolicy == .localOrRemote: scheduleConvergence(userID, since: evidence.received)
            case .cache: break
            }
        }
        do {
            // Untraced (the common case), the writer is awaited without the span's frame.
            if instruments.isTracing {
                try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in try await writer.write(applied.batch) }
            } else {
                try await writer.write(applied.batch)
            }
        } catch {
            refreshBook.persistenceFailures[userID] = error
        }
    }

    // MARK: - Applying answers

    /// Applies an answer under the ordering rule and emits what changed; returns what to
    /// persist and settle.
    func apply(
        _ answer: MomentsAnswer, for userID: String, callStarted: StoreInstant, likeOf momentID: String?
    ) throws -> (StoreState.Applied, Evidence) {
        let now = instant
        let evidence: Evidence
        let source: StoreState.Source
        switch answer.origin {
        case .server(let sentAt):
            evidence = Evidence(sent: sentAt.map(StoreInstant.init) ?? callStarted, received: now)
            source = .server(likeOf: momentID)
        case .cache:
            evidence = .ofUnknownAge(receivedAt: now)
            source = .cache
        }
        let likeChains = likeBook.chains
        var applied = try state.apply(answer.details, for: userID, evidence: evidence, source: source) { likeChains[$0] != nil }
        if logsDebug { debugApplied(answer, for: userID, likeOf: momentID, evidence: evidence, applied: applied) }
        if source != .cache, keepsConfirmationIntervals {
            let reading = ClockReading(configuration.clock, margin: configuration.clockSkewTolerance / 2)
            if let momentID {
                state.addLikeConfirmation(of: momentID, by: userID, in: answer.details, evidence: evidence,
                                          to: &applied.batch, reading: reading)
            }
            applied.batch.confirmedWithin = state.confirmation(of: applied.batch, answer: evidence, reading: reading)
        }
        likeBook.deferred.formUnion(applied.deferredLikers)
        likeBook.contested.formUnion(applied.contestedLikers)
        publish(applied, for: userID, likedBy: momentID.map { _ in userID }, likedMoment: momentID)
        evictIfNeeded(sparing: userID)
        return (consume applied, evidence)
    }

    /// A debug record of what applying `answer` did.
    private func debugApplied(_ answer: MomentsAnswer, for userID: String, likeOf momentID: String?, evidence: Evidence, applied: StoreState.Applied) {
        debug("applied \(momentID.map { "the answer to a like of \($0)" } ?? "a timeline") from \(answer.origin): "
              + answer.details.moments.map { "\(confirmedLikers($0.id))\(shownIsLiked($0.id, of: userID)) (answer \(($0.likes ?? []).map(\.id).joined(separator: ","))\($0.isLiked == true ? "*" : ""))" }.joined(separator: " ")
              + " [\(evidence)]" + (applied.needsConvergence ? "; refetching" : "")
              + (applied.batch.moments.isEmpty ? "" : "; writing \(applied.batch.moments.keys.sorted())") + (applied.batch.timelines.isEmpty ? "" : " and the timeline"),
              userID: userID)
    }

    /// The timeline from memory, or loaded from persistence once; whether there is one.
    /// Callers arriving while it loads wait until it is applied.
    func loadIfNeeded(_ userID: String) async throws -> Bool {
        if state.touch(userID) { return true }
        if let running = refreshBook.loading[userID] { return try await running.value }
        let persistence = self.persistence
        let writer = self.writer
        let task = Task { () async throws -> Bool in
            await writer.idle()  // read what was written, even for a timeline evicted meanwhile
            let loaded = try await persistence.load(userID: userID)
            return try self.applyLoaded(loaded, for: userID)
        }
        refreshBook.loading[userID] = task
        defer { refreshBook.loading[userID] = nil }
        return try await task.value
    }

    private func applyLoaded(_ loaded: MomentsDetails?, for userID: String) throws -> Bool {
        if state.timelines[userID] != nil { return true }
        guard let loaded else { return false }
        let applied = try state.apply(loaded, for: userID, evidence: .ofUnknownAge(receivedAt: instant), source: .persisted) { _ in false }
        publish(applied, for: userID, likedBy: nil, likedMoment: nil)
        evictIfNeeded(sparing: userID)
        return true
    }

    func loadForSubscriber(_ userID: String) async {
        do {
            _ = try await loadIfNeeded(userID)
        } catch {
            log(.error, "the persisted timeline cannot be read for a new subscriber", userID: userID, error: error)
        }
    }
}
