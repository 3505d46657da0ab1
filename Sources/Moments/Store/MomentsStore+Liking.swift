import Foundation
import MomentsHTTP
import MomentsNetworking
import MomentsSupport
import MomentsObservability

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
    ///   the confirmed state could not be persisted (it is still applied and emitted).
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

    /// Shows the like to its liker at once, if their timeline holds the moment; returns
    /// the intent's generation (`nil` when nothing was shown).
    private func showIntent(_ isLiked: Bool, momentID: String, userID: String) async throws -> Int? {
        guard try await loadIfNeeded(userID), state.timeline(of: userID, holds: momentID), let owner = state.timelines[userID] else {
            return nil
        }
        likeBook.calls += 1
        let intent = LikeIntent(isLiked: isLiked, liker: Moment.LikedUser(id: userID, avatar: owner.userDetails.avatar), generation: likeBook.calls)
        // Shown to the liker alone: other users see it once the server confirms it.
        if state.setIntent(intent, on: momentID) {
            publishMoment(momentID, likedBy: userID, phase: .optimistic, audience: .only(userID))
            publishSnapshots(to: [userID])
        }
        return likeBook.calls
    }

    private func performSetLike(_ isLiked: Bool, momentID: String, userID: String) async throws -> MomentsDetails {
        beginActivity()
        defer { endActivity() }
        let key = LikeKey(userID: userID, momentID: momentID)
        likeBook.inFlightPerUser[userID, default: 0] += 1
        defer {
            likeBook.inFlightPerUser[userID, default: 1] -= 1
            if likeBook.inFlightPerUser[userID] == 0 { likeBook.inFlightPerUser[userID] = nil }
        }
        let generation = try await showIntent(isLiked, momentID: momentID, userID: userID)

        let requestID = beginRequest(at: instant)
        defer { endRequest(requestID) }
        let previous = likeBook.chains[key]
        let link = Latch()
        likeBook.chains[key] = link
        let result: Result<(MomentsAnswer, StoreInstant), any Error>
        var sent = false
        // The request runs in the caller's task; the previous call's request must end first.
        await previous?.wait()
        if Task.isCancelled {
            result = .failure(CancellationError())
        } else {
            let started = instant
            sent = true
            do {
                result = .success((try await service.likeAnswer(isLiked, momentID: momentID, fromUserID: userID), started))
            } catch {
                result = .failure(error)
            }
        }
        link.open()

        switch result {
        case .success(let (answer, started)):
            let applied: StoreState.Applied
            do {
                (applied, _) = try apply(answer, for: userID, callStarted: started, likeOf: momentID)
            } catch {
                endLike(key, link: link, generation: generation, failed: true)
                throw error
            }
            endLike(key, link: link, generation: generation, failed: false, answerChangedLikersView: applied.likersViewChanged)
            if applied.needsConvergence { scheduleConvergence(userID, since: instant) }
            let ticket = writer.enqueue(applied.batch)
            await invalidateCachedTimelines(holding: momentID, liker: userID)
            // Untraced (the common case), the writer is awaited without the span's frame.
            if instruments.isTracing {
                try await TraceContext.span("moments.persistence.save", tracer: instruments.tracer) { _ in try await writer.wait(for: ticket) }
            } else {
                try await writer.wait(for: ticket)
            }
            return state.displayedTimeline(userID) ?? answer.details
        case .failure(let error):
            endLike(key, link: link, generation: generation, failed: true)
            if sent, Self.mayHaveReachedServer(error) {
                // The server may have applied the like and lost its answer: only the
                // server can say, so a refetch sent after this failure settles it.
                debug("the like of \(momentID) failed after it may have reached the server; refetching", userID: userID)
                scheduleConvergence(userID, since: instant)
            }
            throw error
        }
    }

    /// Whether a like that failed with `error` may have been applied by the server: every
    /// failure but those the client knows came before anything was sent.
    static func mayHaveReachedServer(_ error: any Error) -> Bool {
        guard let error = error as? HTTPClientError else { return !(error is CancellationError) }
        switch error.code {
        case .transportFailure: return error.transportFailure?.mayHaveReachedServer ?? true
        case .invalidRequest, .circuitOpen, .overloaded, .shutDown: return false
        default: return true
        }
    }

    /// Ends one like call: its chain link, and its intent unless a later call replaced it
    /// (emitting the confirmed value, or the rollback).
    private func endLike(_ key: LikeKey, link: Latch, generation: Int?, failed: Bool, answerChangedLikersView: Bool = false) {
        if likeBook.chains[key] === link { likeBook.chains[key] = nil }
        if failed, likeBook.deferred.remove(key) != nil {
            // An answer's difference was waiting on this like, which may or may not have
            // reached the server: only the server can settle it.
            scheduleConvergence(key.userID, since: instant)
        } else if likeBook.chains[key] == nil {
            likeBook.deferred.remove(key)
        }
        if likeBook.chains[key] == nil, likeBook.contested.remove(key) != nil {
            debug("the like of \(key.momentID) by \(key.userID) was contested by another instance; refetching", userID: key.userID)
            scheduleConvergence(state.holders(of: key.momentID).min() ?? key.userID, since: instant)
        }
        let (removed, changed) = generation.map { state.removeIntent(key.userID, from: key.momentID, generation: $0) } ?? (false, false)
        if removed {
            publishMoment(key.momentID, likedBy: key.userID, phase: failed ? .rolledBack : .confirmed, audience: .only(key.userID))
        } else if answerChangedLikersView {
            // A later call's like is still shown on top of what the answer changed.
            publishMoment(key.momentID, likedBy: key.userID, phase: .optimistic, audience: .only(key.userID))
        }
        if changed || answerChangedLikersView { publishSnapshots(to: [key.userID]) }
    }

    private func invalidateCachedTimelines(holding momentID: String, liker: String) async {
        guard service.cachesTimelines else { return }
        var users = state.holders(of: momentID)
        users.insert(liker)
        if let persisted = try? await persistence.userIDs(holding: momentID) { users.formUnion(persisted) }
        await service.invalidateCachedTimelines(of: users.sorted())
    }
}
