/// Changes other instances committed, arriving through the configured
/// ``MomentsStore/Configuration-swift.struct/changeBus``.
extension MomentsStore {
    /// Applies one bus event: a commit under the ordering rule, or an interruption
    /// (marked on the change feed, then everything held resynchronised).
    func receive(_ event: SharedChangeEvent, from bus: any MomentsChangeBus) async {
        switch event {
        case .committed(let commit):
            applyShared(commit)
        case .interrupted:
            feed.publish(.sharedChangesInterrupted)
            let momentIDs = Array(state.records.keys)
            let userIDs = Array(state.timelines.keys)
            do {
                applyShared(try await bus.committedState(momentIDs: momentIDs, userIDs: userIDs))
            } catch {
                log(.error, "could not resynchronise with the shared storage after an interruption", userID: "", error: error)
            }
        }
    }

    /// Applies what another instance committed to the moments and timelines this store
    /// holds (others are left to be loaded when asked for). A value whose order against
    /// this store's cannot be known is settled by a refetch, as for the store's own
    /// answers; nothing is written back.
    private func applyShared(_ commit: SharedCommit) {
        let tolerance = configuration.clockSkewTolerance
        let likeChains = self.likeChains
        // Each moment has the age of its own row, not of the timeline listing it.
        var momentEvidence: [String: Evidence] = [:]
        for committed in commit.moments {
            momentEvidence[committed.moment.id] = Evidence.shared(committed.confirmedWithin, tolerance: tolerance)
        }
        for timeline in commit.timelines where state.timelines[timeline.userID] != nil {
            let evidence = Evidence.shared(timeline.confirmedWithin, tolerance: tolerance)
            do {
                let applied = try state.apply(
                    timeline.details, for: timeline.userID, evidence: evidence, source: .shared, momentEvidence: momentEvidence
                ) { likeChains[$0] != nil }
                debug("applied another instance's timeline: " + timeline.details.moments.map(\.id).map(confirmedLikers).joined(separator: " ")
                      + (applied.needsConvergence ? "; refetching" : "") + (applied.contestedLikers.isEmpty ? "" : "; contests \(applied.contestedLikers.map(\.userID))"),
                      userID: timeline.userID)
                settle(applied, holder: timeline.userID)
                publish(applied, for: timeline.userID, likedBy: nil, likedMoment: nil)
            } catch {
                log(.warning, "ignored a shared timeline the store refuses", userID: timeline.userID, error: error)
            }
        }
        for committed in commit.moments {
            let evidence = momentEvidence[committed.moment.id] ?? .ofUnknownAge(receivedAt: .now)
            var applied = state.applyShared(committed.moment, evidence: evidence) { likeChains[$0] != nil }
            if committed.isContested, state.noteContested(committed.moment.id) {
                debug("another instance's save of \(committed.moment.id) contested a value of unknown order", userID: "")
                applied.needsConvergence = true
            }
            debug("applied another instance's moment \(committed.moment.id)[\((committed.moment.likes ?? []).map(\.id).joined(separator: ","))]: holds \(confirmedLikers(committed.moment.id))"
                  + (applied.needsConvergence ? "; refetching" : "") + (applied.contestedLikers.isEmpty ? "" : "; contests \(applied.contestedLikers.map(\.userID))"),
                  userID: "")
            settle(applied, holder: state.holders(of: committed.moment.id).min())
            publish(applied, for: "", likedBy: nil, likedMoment: nil)
        }
    }

    /// Schedules what the server must settle: a refetch now, and one when each contested
    /// like's chain ends.
    private func settle(_ applied: StoreState.Applied, holder: String?) {
        contestedLikers.formUnion(applied.contestedLikers)
        if applied.needsConvergence, let holder { scheduleConvergence(holder, since: .now) }
    }
}
