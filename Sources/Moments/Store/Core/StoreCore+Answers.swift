/// Answers: a refresh's and a like's applied under the ordering rule, timelines read
/// back from persistence, and the changes they emit.
extension StoreCore {
    /// Applies an answer to `userID`'s refresh; schedules its settling if it needs the
    /// server to settle it.
    mutating func answerRefresh(
        _ answer: MomentsAnswer, for userID: String, sent: StoreInstant, source: TimelineSource, reading: ClockReading?,
        at now: StoreInstant, into actions: inout [Action]
    ) {
        var applied: StoreState.Applied
        do {
            applied = try apply(answer, for: userID, sent: sent, likeOf: nil, reading: reading, at: now, into: &actions)
        } catch {
            actions.append(.refuse(error))
            return
        }
        if applied.needsConvergence {
            switch answer.origin {
            case .server: scheduleSettling(userID, since: now, into: &actions)
            // A cached answer is settled by the server when the caller let it be asked.
            case .cache where source.settlesCachedAnswersWithServer: scheduleSettling(userID, since: now, into: &actions)
            case .cache: break
            }
        }
        persist(applied.takeBatch(), into: &actions)
        state.recycle(consume applied)
    }

    /// Applies an answer under the ordering rule and emits what changed; returns what to
    /// persist and settle.
    mutating func apply(
        _ answer: MomentsAnswer, for userID: String, sent: StoreInstant, likeOf momentID: String?, reading: ClockReading?,
        at now: StoreInstant, into actions: inout [Action]
    ) throws -> StoreState.Applied {
        let evidence: Evidence
        let source: StoreState.Source
        switch answer.origin {
        case .server(let sentAt):
            evidence = Evidence(sent: sentAt.map(StoreInstant.init) ?? sent, received: now)
            source = .server(likeOf: brokenRules.contains(.likeAnswerIsNoAuthority) ? nil : momentID)
        case .cache where brokenRules.contains(.cacheIsFresh):
            evidence = Evidence(sent: sent, received: now)
            source = .server(likeOf: nil)
        case .cache:
            evidence = .ofUnknownAge(receivedAt: now)
            source = .cache
        }
        let chains = likes.chains
        var applied = try state.apply(answer.details, for: userID, evidence: evidence, source: source) { chains[$0] != nil }
        if logsDebug { debugApplied(answer, for: userID, likeOf: momentID, evidence: evidence, applied: applied, into: &actions) }
        if source != .cache, keepsConfirmationIntervals, let reading {
            if let momentID {
                state.addLikeConfirmation(of: momentID, by: userID, in: answer.details, evidence: evidence, to: &applied.batch, reading: reading)
            }
            applied.batch.confirmedWithin = state.confirmation(of: applied.batch, answer: evidence, reading: reading)
        }
        likes.deferred.formUnion(applied.deferredLikers)
        likes.contested.formUnion(applied.contestedLikers)
        publish(applied, for: userID, likedBy: momentID.map { _ in userID }, likedMoment: momentID, into: &actions)
        evictIfNeeded(sparing: userID, into: &actions)
        return consume applied
    }

    /// A debug record of what applying `answer` did.
    private func debugApplied(
        _ answer: MomentsAnswer, for userID: String, likeOf momentID: String?, evidence: Evidence, applied: StoreState.Applied,
        into actions: inout [Action]
    ) {
        debug("applied \(momentID.map { "the answer to a like of \($0)" } ?? "a timeline") from \(answer.origin): "
              + answer.details.moments.map { "\(confirmedLikers($0.id))\(shownIsLiked($0.id, of: userID)) (answer \(($0.likes ?? []).map(\.id).joined(separator: ","))\($0.isLiked == true ? "*" : ""))" }.joined(separator: " ")
              + " [\(evidence)]" + (applied.needsConvergence ? "; refetching" : "")
              + (applied.batch.moments.isEmpty ? "" : "; writing \(applied.batch.moments.keys.sorted())") + (applied.batch.timelines.isEmpty ? "" : " and the timeline"),
              userID: userID, into: &actions)
    }

    /// Applies a timeline read from persistence, unless memory already holds one.
    mutating func applyLoaded(_ loaded: MomentsDetails?, for userID: String, at now: StoreInstant, into actions: inout [Action]) {
        guard state.timelines[userID] == nil, let loaded else { return }
        do {
            let applied = try state.apply(loaded, for: userID, evidence: .ofUnknownAge(receivedAt: now), source: .persisted) { _ in false }
            publish(applied, for: userID, likedBy: nil, likedMoment: nil, into: &actions)
            evictIfNeeded(sparing: userID, into: &actions)
        } catch {
            actions.append(.refuse(error))
        }
    }

    // MARK: - Emitting

    /// Emits what applying an answer for `userID`'s timeline changed: each moment whose
    /// confirmed value changed, to every holder (but to the liker, while their own like
    /// of it is still in flight: its end emits it to them); each moment whose `isLiked`
    /// changed for `userID` alone, to them; then the timeline's change; then snapshots.
    func publish(_ applied: StoreState.Applied, for userID: String, likedBy: String?, likedMoment: String?, into actions: inout [Action]) {
        let pendingLike = likedMoment.flatMap { state.intentGeneration(of: userID, on: $0) != nil ? $0 : nil }
        var users: Set<String> = []
        // The owner's timeline, to read their `isLiked` at the positions the answer gave.
        let owner = applied.changedPositions.count == applied.changedMoments.count ? state.timeline(userID) : nil
        for (offset, id) in applied.changedMoments.enumerated() {
            let audience: StoreState.Audience = id == pendingLike ? .holdersExcept(userID) : .holders
            let hint = owner.map { StoreState.EntryHint(userID: userID, timeline: $0, index: applied.changedPositions[offset]) }
            if let change = publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: audience, hint: hint, into: &actions) {
                if users.isEmpty { users = change.holders } else { users.formUnion(change.holders) }
            }
        }
        var ownerChanged = applied.timeline != nil
        if !applied.changedEntries.isEmpty {
            // A moment whose confirmed value changed too went out to every holder above
            // (a few are searched in place; many, in a set).
            let changedNow = applied.changedMoments.count > 16 ? Set(applied.changedMoments) : nil
            for id in applied.changedEntries where id != pendingLike {
                ownerChanged = true
                if !(changedNow?.contains(id) ?? applied.changedMoments.contains(id)) {
                    publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: .only(userID), into: &actions)
                }
            }
        }
        if let timeline = applied.timeline { actions.append(.emit(.timeline(timeline))) }
        if ownerChanged, !userID.isEmpty, !users.contains(userID) { users.insert(userID) }
        if !users.isEmpty { actions.append(.deliverSnapshots(users)) }
    }

    /// Emits the change of `momentID` as `audience` sees it; returns it.
    @discardableResult
    func publishMoment(
        _ momentID: String, likedBy: String?, phase: MomentChange.Phase, audience: StoreState.Audience, hint: StoreState.EntryHint? = nil,
        into actions: inout [Action]
    ) -> MomentChange? {
        guard let change = state.momentChange(momentID, phase: phase, likedBy: likedBy, audience: audience, hint: hint) else { return nil }
        actions.append(.emit(.moment(change)))
        return change
    }
}
