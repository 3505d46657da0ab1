/// Likes: the liker's intent, the chain that keeps one pair's calls in call order, and
/// the answer or the rollback.
extension StoreCore {
    /// Shows the like to its liker (if their timeline holds the moment), adds it to its
    /// chain, and sends it if no call of the chain is ahead of it.
    mutating func readyLike(_ id: CallID, at now: StoreInstant, into actions: inout [Action]) {
        guard var call = likes.calls[id], call.phase == .loading else { return }
        let key = call.key
        if state.timeline(of: key.userID, holds: key.momentID), let owner = state.timeline(key.userID) {
            let intent = LikeIntent(isLiked: call.isLiked, liker: .init(id: key.userID, avatar: owner.userDetails.avatar), generation: id)
            call.showsIntent = true
            // Shown to the liker alone: other users see it once the server confirms it.
            if state.setIntent(intent, on: key.momentID) {
                publishMoment(key.momentID, likedBy: key.userID, phase: .optimistic, audience: .only(key.userID), into: &actions)
                actions.append(.deliverSnapshots([key.userID]))
            }
        }
        refreshes.requestStarts[id] = now
        let isFirst = likes.chains[key] == nil
        if isFirst { likes.chains[key] = LikeChain(id) } else { likes.chains[key]?.append(id) }
        call.phase = isFirst || brokenRules.contains(.likesUnchained) ? .sending : .waiting
        likes.calls[id] = call
        if call.phase == .sending { actions.append(.send(id)) }
    }

    /// Ends a like call: its answer applied (or its intent taken back), its chain's next
    /// call sent, and what only the server can settle scheduled.
    mutating func endLike(_ id: CallID, _ outcome: consuming LikeOutcome, reading: ClockReading?, at now: StoreInstant, into actions: inout [Action]) {
        guard let call = likes.calls.removeValue(forKey: id) else { return }
        let key = call.key
        defer {
            likes.inFlightPerUser[key.userID, default: 1] -= 1
            if likes.inFlightPerUser[key.userID] == 0 { likes.inFlightPerUser[key.userID] = nil }
        }
        guard call.phase != .loading else { return }
        // Its own answer is applied while the call is still in its chain.
        var applied: StoreState.Applied?
        var refusal: (any Error)?
        var mayHaveReachedServer = false
        // Taken apart, not copied: the answer is applied in place.
        switch consume outcome {
        case .answered(let answer, let sent):
            do {
                applied = try apply(answer, for: key.userID, sent: sent, likeOf: key.momentID, reading: reading, at: now, into: &actions)
            } catch {
                refusal = error
            }
        case .failed(let reached):
            mayHaveReachedServer = reached
        case .notSent:
            break
        }
        let next = leaveChain(id, key: key)
        defer {
            endRequest(id)
            // The chain's next call is sent now: this one's request has ended.
            if let next { actions.append(.send(next)) }
        }
        if var applied = applied.take() {
            finishLike(call, id: id, failed: false, answerChangedLikersView: applied.likersViewChanged, at: now, into: &actions)
            if applied.needsConvergence { scheduleSettling(key.userID, since: now, into: &actions) }
            persist(applied.takeBatch(), into: &actions)
            state.recycle(consume applied)
            actions.append(.invalidateCachedTimelines(momentID: key.momentID, liker: key.userID))
            return
        }
        finishLike(call, id: id, failed: true, at: now, into: &actions)
        if let refusal {
            actions.append(.refuse(refusal))
        } else if mayHaveReachedServer {
            // The server may have applied the like and lost its answer: only the
            // server can say, so a refetch sent after this failure settles it.
            debug("the like of \(key.momentID) failed after it may have reached the server; refetching", userID: key.userID, into: &actions)
            scheduleSettling(key.userID, since: now, into: &actions)
        }
    }

    /// Takes call `id` out of its chain; returns the call to send next, if it was first.
    private mutating func leaveChain(_ id: CallID, key: LikeKey) -> CallID? {
        guard let (count, head) = likes.chains[key].map({ ($0.count, $0.head) }) else { return nil }
        if count == 1 {
            if head == id { likes.chains[key] = nil }
            return nil
        }
        // Changed in place, where the dictionary holds it.
        guard likes.chains[key]?.remove(id) == 0, let first = likes.chains[key]?.head, likes.calls[first]?.phase == .waiting else { return nil }
        likes.calls[first]?.phase = .sending
        return first
    }

    /// Ends one like call's registers and intent, unless a later call replaced it
    /// (emitting the confirmed value, or the rollback).
    private mutating func finishLike(
        _ call: LikeCall, id: CallID, failed: Bool, answerChangedLikersView: Bool = false, at now: StoreInstant, into actions: inout [Action]
    ) {
        let key = call.key
        let chainEnded = likes.chains[key] == nil
        if failed, likes.deferred.remove(key) != nil {
            // An answer's difference was waiting on this like, which may or may not have
            // reached the server: only the server can settle it.
            scheduleSettling(key.userID, since: now, into: &actions)
        } else if chainEnded {
            likes.deferred.remove(key)
        }
        if chainEnded, likes.contested.remove(key) != nil {
            debug("the like of \(key.momentID) by \(key.userID) was contested by another instance; refetching", userID: key.userID, into: &actions)
            scheduleSettling(state.holders(of: key.momentID).min() ?? key.userID, since: now, into: &actions)
        }
        if failed, brokenRules.contains(.noRollback) { return }
        let (removed, changed) = call.showsIntent ? state.removeIntent(key.userID, from: key.momentID, generation: id) : (false, false)
        if removed {
            publishMoment(key.momentID, likedBy: key.userID, phase: failed ? .rolledBack : .confirmed, audience: .only(key.userID), into: &actions)
        } else if answerChangedLikersView {
            // A later call's like is still shown on top of what the answer changed.
            publishMoment(key.momentID, likedBy: key.userID, phase: .optimistic, audience: .only(key.userID), into: &actions)
        }
        if changed || answerChangedLikersView { actions.append(.deliverSnapshots([key.userID])) }
    }
}
