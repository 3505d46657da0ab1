import MomentsObservability
import MomentsHTTP
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
            await findHolders(act(.sharedCommitted(commit, resynchronising: false), at: instant, reading: sharedReading()).unheld)
        case .interrupted:
            feed.publish(.sharedChangesInterrupted)
            // Re-read until it succeeds (50 ms, doubling up to 2 s between attempts): the
            // store is behind the other instances until then.
            var delay = Duration.milliseconds(50)
            while !Task.isCancelled {
                let momentIDs = Array(state.records.keys)
                let userIDs = Array(state.timelines.keys)
                do {
                    let commit = try await bus.committedState(momentIDs: momentIDs, userIDs: userIDs)
                    await findHolders(act(.sharedCommitted(commit, resynchronising: true), at: instant, reading: sharedReading()).unheld)
                    return
                } catch {
                    log(.error, "could not resynchronise with the shared storage after an interruption; trying again", userID: "", error: error)
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, .seconds(2))
                }
            }
        }
    }

    /// The clock read for another instance's wall-clock intervals.
    private func sharedReading() -> ClockReading {
        ClockReading(configuration.clock, margin: configuration.clockSkewTolerance / 2)
    }

    /// Looks up in persistence who holds each of `momentIDs`, which the server must
    /// settle though no timeline in memory holds them (see
    /// ``StoreCore/Action/findHolders(momentIDs:)``).
    private func findHolders(_ momentIDs: [String]) async {
        for momentID in momentIDs {
            do {
                act(.holdersFound(momentID: momentID, holders: try await persistence.userIDs(holding: momentID)))
            } catch {
                log(.warning, "could not find who holds a moment to settle; the next refresh of a timeline holding it settles it",
                    userID: "", error: error)
            }
        }
    }
}
