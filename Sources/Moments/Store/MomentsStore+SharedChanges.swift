import MomentsHTTP
import MomentsNetworking
import MomentsObservability
/// Changes other instances committed, arriving through the configured
/// ``MomentsStore/Configuration-swift.struct/changeBus``.
extension MomentsStore {
    /// Applies one bus event: a commit under the ordering rule, or an interruption
    /// (marked on the change feed, then everything held resynchronised).
    func receive(_ event: SharedChangeEvent, from bus: any MomentsChangeBus) async {
        switch event {
        case .committed(let commit):
            if instruments.isMeasuring {
                let confirmed = (commit.moments.compactMap { $0.confirmedWithin?.notAfter } + commit.timelines.compactMap { $0.confirmedWithin?.notAfter }).max()
                if let confirmed { instruments.appliedShared(confirmedBy: confirmed, now: configuration.clock.date) }
            }
            forgetRemoved(commit)
            await settleUnheld(applyShared(commit))
        case .interrupted:
            feed.publish(.sharedChangesInterrupted)
            // Re-read until it succeeds (50 ms, doubling up to 2 s between attempts): the
            // store is behind the other instances until then.
            var delay = Duration.milliseconds(50)
            while !Task.isCancelled {
                let momentIDs = Array(state.records.keys)
                let userIDs = Array(state.timelines.keys)
                do {
                    await settleUnheld(applyShared(try await bus.committedState(momentIDs: momentIDs, userIDs: userIDs)))
                    return
                } catch {
                    log(.error, "could not resynchronise with the shared storage after an interruption; trying again", userID: "", error: error)
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                }
            }
        }
    }

    /// Forgets the timelines another instance removed (every one, if it removed
    /// everything): they are no longer served from memory.
    private func forgetRemoved(_ commit: SharedCommit) {
        let removed = commit.removedEverything ? Array(state.timelines.keys) : commit.removedUserIDs
        for userID in removed where state.timelines[userID] != nil {
            debug("another instance removed the timeline", userID: userID)
            state.forget(userID)
        }
    }

    /// Has the server settle moments that need it (contested, or of unknown order)
    /// though no timeline in memory holds them.
    ///
    /// A contest comes to the instance whose save replaced a value of unknown order: it
    /// must have the server settle the moment even after evicting every timeline that
    /// held it, or the shared storage keeps a value the server may have overwritten.
    /// The timeline of one user the storage lists as holding the moment is refetched
    /// (loaded first, then answered by the server, whose value is written if it differs).
    private func settleUnheld(_ momentIDs: [String]) async {
        for momentID in momentIDs {
            let holders: [String]
            do {
                holders = try await persistence.userIDs(holding: momentID)
            } catch {
                log(.warning, "could not find who holds a moment to settle; the next refresh of a timeline holding it settles it",
                    userID: "", error: error)
                continue
            }
            guard let holder = holders.min() else { continue }
            debug("no timeline in memory holds \(momentID), which the server must settle; refetching a timeline the storage lists", userID: holder)
            scheduleConvergence(holder, since: instant)
        }
    }

    /// Applies what another instance committed to the moments and timelines this store
    /// holds (others are left to be loaded when asked for). A value whose order against
    /// this store's cannot be known is settled by a refetch, as for the store's own
    /// answers; nothing is written back. Returns the moments to settle that no timeline
    /// in memory holds (see `settleUnheld`).
    private func applyShared(_ commit: SharedCommit) -> [String] {
        var unheld: [String] = []
        let reading = ClockReading(configuration.clock, margin: configuration.clockSkewTolerance / 2)
        let likeChains = likeBook.chains
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
        // After applying them: a contested timeline is written again whatever it changes.
        for timeline in commit.timelines where timeline.isContested {
            // Contested: the server settles it, whether or not this store holds it (a
            // refresh of a timeline not in memory loads it, then writes the answer).
            state.noteContestedTimeline(timeline.userID)
            debug("another instance's save of the timeline contested a value of unknown order; refetching", userID: timeline.userID)
            scheduleConvergence(timeline.userID, since: instant)
        }
        for committed in commit.moments {
            let evidence = momentEvidence[committed.moment.id] ?? .ofUnknownAge(receivedAt: instant)
            var applied = state.applyShared(committed.moment, evidence: evidence) { likeBook.chains[$0] != nil }
            if committed.isContested {
                // Contested: the server settles it, whether or not a record holds it here.
                if state.noteContested(committed.moment.id) {
                    debug("another instance's save of \(committed.moment.id) contested a value of unknown order", userID: "")
                }
                applied.needsConvergence = true
            }
            debug("applied another instance's moment \(committed.moment.id)[\((committed.moment.likes ?? []).map(\.id).joined(separator: ","))]: holds \(confirmedLikers(committed.moment.id))"
                  + (applied.needsConvergence ? "; refetching" : "") + (applied.contestedLikers.isEmpty ? "" : "; contests \(applied.contestedLikers.map(\.userID))"),
                  userID: "")
            let holder = state.holders(of: committed.moment.id).min()
            // A moment no timeline in memory holds (no record, or one kept while older
            // answers may come) is settled through the storage's holders.
            if applied.needsConvergence, holder == nil { unheld.append(committed.moment.id) }
            settle(applied, holder: holder)
            publish(applied, for: "", likedBy: nil, likedMoment: nil)
        }
        return unheld
    }

    /// Schedules what the server must settle: a refetch now, and one when each contested
    /// like's chain ends.
    private func settle(_ applied: StoreState.Applied, holder: String?) {
        likeBook.contested.formUnion(applied.contestedLikers)
        if applied.needsConvergence, let holder { scheduleConvergence(holder, since: instant) }
    }
}
