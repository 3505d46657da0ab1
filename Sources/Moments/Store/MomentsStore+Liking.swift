import Foundation
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// Liking and unliking: the liker's optimistic intent, the mutation, and its answer
/// or rollback.
extension MomentsStore {
    /// Has `userID` like or unlike a moment of their timeline, optimistically.
    ///
    /// The change is emitted at once to `userID` alone (`isLiked` set, the user added to
    /// or removed from `likes`, in their own timeline only); the mutation is sent; the
    /// server's answer is applied, emitted and persisted, and the moment changes in
    /// every timeline that holds it. On failure the change is taken back, emitted to
    /// `userID`, and the error thrown: no other user ever saw it. Concurrent calls for one
    /// moment reach the server in call order; the last call's state wins.
    ///
    /// - Returns: The timeline as subscribers see it after the answer.
    /// - Throws: The service's error, after taking the change back; `CancellationError`
    ///   if the calling task is cancelled (wherever the cancellation lands: the change is
    ///   taken back unless the server's answer already came); a ``PersistenceError`` if
    ///   the confirmed state could not be persisted (it is still applied and emitted, and
    ///   persisted with the next write), or, with nothing sent, if the user's timeline
    ///   had to be read from persistence while earlier failed writes still could not be
    ///   written.
    ///   ``MomentsStoreError/Code-swift.struct/shutDown`` once ``shutdown(gracePeriod:)``
    ///   has begun; ``MomentsStoreError/Code-swift.struct/likesNotFetched``, with nothing
    ///   sent, when the store was configured without likes.
    @discardableResult
    public func setLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        try checkRunning(userID)
        guard configuration.withLikes else { throw MomentsStoreError(code: .likesNotFetched, userID: userID, momentID: momentID) }
        guard instruments.isTracing else { return try await setLikeMappingCancellation(isLiked, momentID: momentID, userID: userID) }
        return try await TraceContext.span("moments.store.set_like", tracer: instruments.tracer) { span in
            span?.setAttribute("moments.user_id", .string(userID))
            span?.setAttribute("moments.moment_id", .string(momentID))
            return try await setLikeMappingCancellation(isLiked, momentID: momentID, userID: userID)
        }
    }

    /// ``setLike(_:momentID:userID:)``, throwing `CancellationError` for any failure of a
    /// cancelled call.
    private func setLikeMappingCancellation(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        do {
            return try await performSetLike(isLiked, momentID: momentID, userID: userID)
        } catch where Task.isCancelled {
            throw CancellationError()
        }
    }

    private func performSetLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        beginActivity()
        defer { endActivity() }
        let call = nextNumber()
        core.askLike(call, userID: userID, momentID: momentID, isLiked: isLiked)
        var ended = false
        defer { if !ended { act(.likeEnded(call, .notSent)) } }
        _ = try await loadIfNeeded(userID)
        note(.likeReady(call), at: instant)
        // The request runs in the caller's task; the chain's calls before it end first.
        await waitForTurn(call)
        let outcome: StoreCore.LikeOutcome
        var failure: any Error = CancellationError()
        // The answer's timeline, should the store no longer hold the liker's.
        var answered: MomentsDetails?
        if Task.isCancelled {
            outcome = .notSent
        } else {
            let sent = instant
            do {
                let received = try await service.likeAnswer(isLiked, momentID: momentID, fromUserID: userID)
                answered = received.details
                outcome = .answered(consume received, sent: sent)
            } catch {
                failure = error
                outcome = .failed(mayHaveReachedServer: service.likeMayHaveReachedServer(failingWith: error))
            }
        }
        ended = true
        let now = instant
        let reading = keepsConfirmationIntervals && answered != nil
            ? ClockReading(configuration.clock, margin: configuration.clockSkewTolerance / 2) : nil
        let performed = act(.likeEnded(call, consume outcome), at: now, reading: reading)
        if let refusal = performed.refusal { throw refusal }
        guard let answered else { throw failure }
        if let invalidation = performed.invalidation {
            await invalidateCachedTimelines(holding: invalidation.momentID, liker: invalidation.liker)
        }
        // Untraced (the common case), the writer is awaited without the span's frame.
        if instruments.isTracing {
            try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in try await writer.wait(for: performed.ticket) }
        } else {
            try await writer.wait(for: performed.ticket)
        }
        return state.displayedTimeline(userID) ?? answered
    }

    private func invalidateCachedTimelines(holding momentID: String, liker: String) async {
        guard service.cachesTimelines else { return }
        var users = state.holders(of: momentID)
        users.insert(liker)
        if let persisted = try? await persistence.userIDs(holding: momentID) { users.formUnion(persisted) }
        await service.invalidateCachedTimelines(of: users.sorted())
    }
}
