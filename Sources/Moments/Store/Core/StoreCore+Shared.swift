import MomentsObservability

/// Changes other instances committed, arriving through the configured
/// ``MomentsStore/Configuration-swift.struct/changeBus``.
extension StoreCore {
    /// Forgets the timelines another instance removed (every one, if it removed
    /// everything): they are no longer served from memory.
    mutating func forgetRemoved(_ commit: SharedCommit, into actions: inout [Action]) {
        let removed = commit.removedEverything ? Array(state.timelines.keys) : commit.removedUserIDs
        for userID in removed where state.timelines[userID] != nil {
            debug("another instance removed the timeline", userID: userID, into: &actions)
            state.forget(userID)
        }
    }

    /// Applies what another instance committed to the moments and timelines this store
    /// holds (others are left to be loaded when asked for). A value whose order against
    /// this store's cannot be known is settled by a refetch, as for the store's own
    /// answers; nothing is written back.
    ///
    /// A contest comes to the instance whose save replaced a value of unknown order: it
    /// must have the server settle the moment even after evicting every timeline that
    /// held it, or the shared storage keeps a value the server may have overwritten. So
    /// moments to settle that no timeline in memory holds are settled through a timeline
    /// the storage lists as holding them (``Action/findHolders(momentIDs:)``).
    mutating func applyShared(_ commit: SharedCommit, reading: ClockReading, at now: StoreInstant, into actions: inout [Action]) {
        var unheld: [String] = []
        let chains = likes.chains
        // Each moment has the age of its own row, not of the timeline listing it.
        var momentEvidence: [String: Evidence] = [:]
        for committed in commit.moments {
            momentEvidence[committed.moment.id] = Evidence.shared(committed.confirmedWithin, reading: reading)
        }
        for timeline in commit.timelines where state.timelines[timeline.userID] != nil {
            let evidence = Evidence.shared(timeline.confirmedWithin, reading: reading)
            do {
                let applied = try state.apply(
                    timeline.details, for: timeline.userID, evidence: evidence, source: .shared, momentEvidence: momentEvidence
                ) { chains[$0] != nil }
                debug("applied another instance's timeline: " + timeline.details.moments.map(\.id).map(confirmedLikers).joined(separator: " ")
                      + (applied.needsConvergence ? "; refetching" : "") + (applied.contestedLikers.isEmpty ? "" : "; contests \(applied.contestedLikers.map(\.userID))"),
                      userID: timeline.userID, into: &actions)
                settle(applied, holder: timeline.userID, at: now, into: &actions)
                publish(applied, for: timeline.userID, likedBy: nil, likedMoment: nil, into: &actions)
            } catch {
                actions.append(.log(.warning, "ignored a shared timeline the store refuses", userID: timeline.userID, error: error))
            }
        }
        // After applying them: a contested timeline is written again whatever it changes.
        for timeline in commit.timelines where timeline.isContested {
            // Contested: the server settles it, whether or not this store holds it (a
            // refresh of a timeline not in memory loads it, then writes the answer).
            state.noteContestedTimeline(timeline.userID)
            debug("another instance's save of the timeline contested a value of unknown order; refetching", userID: timeline.userID, into: &actions)
            scheduleSettling(timeline.userID, since: now, into: &actions)
        }
        for committed in commit.moments {
            let evidence = momentEvidence[committed.moment.id] ?? .ofUnknownAge(receivedAt: now)
            let likeChains = likes.chains
            var applied = state.applyShared(committed.moment, evidence: evidence) { likeChains[$0] != nil }
            if committed.isContested {
                // Contested: the server settles it, whether or not a record holds it here.
                if state.noteContested(committed.moment.id) {
                    debug("another instance's save of \(committed.moment.id) contested a value of unknown order", userID: "", into: &actions)
                }
                applied.needsConvergence = true
            }
            debug("applied another instance's moment \(committed.moment.id)[\((committed.moment.likes ?? []).map(\.id).joined(separator: ","))]: holds \(confirmedLikers(committed.moment.id))"
                  + (applied.needsConvergence ? "; refetching" : "") + (applied.contestedLikers.isEmpty ? "" : "; contests \(applied.contestedLikers.map(\.userID))"),
                  userID: "", into: &actions)
            let holder = state.holders(of: committed.moment.id).min()
            // A moment no timeline in memory holds (no record, or one kept while older
            // answers may come) is settled through the storage's holders.
            if applied.needsConvergence, holder == nil { unheld.append(committed.moment.id) }
            settle(applied, holder: holder, at: now, into: &actions)
            publish(applied, for: "", likedBy: nil, likedMoment: nil, into: &actions)
        }
        if !unheld.isEmpty { actions.append(.findHolders(momentIDs: unheld)) }
    }

    /// Schedules what the server must settle: a refetch now, and one when each contested
    /// like's chain ends.
    private mutating func settle(_ applied: StoreState.Applied, holder: String?, at now: StoreInstant, into actions: inout [Action]) {
        likes.contested.formUnion(applied.contestedLikers)
        if applied.needsConvergence, let holder { scheduleSettling(holder, since: now, into: &actions) }
    }
}
