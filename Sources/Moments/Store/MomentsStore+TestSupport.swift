import Foundation
import MomentsSupport

/// What tests and simulations read of a store's inner state: `package`, never public.
extension MomentsStore {
    /// The confirmed value of every moment in memory (likes in flight left out), for
    /// tests that check confirmed state only moves forward.
    package var confirmedMoments: [String: Moment] {
        state.records.mapValues(\.value)
    }

    /// How many `setLike` calls of `userID` have begun and not returned (for tests).
    package func likeCallsInFlight(for userID: String) -> Int { core.likeCallsInFlight(of: userID) }

    /// Whether nothing is in flight now (no refresh, like, refetch or write), without
    /// waiting (for tests that poll).
    package var isIdle: Bool { activity.count == 0 && !writer.isBusy }

    /// What the store has in flight, for tests and diagnostics.
    package var diagnostics: String {
        "activity \(activity.count), refreshes \(core.refreshes.inFlight.sorted { $0.key < $1.key }.map { "\($0.key)\($0.value == .loading ? "(reading)" : "(sent)")" }), likes \(core.likes.chains.keys.map { "\($0.userID)/\($0.momentID)" }.sorted()), "
            + "settling \(core.settling.needed.keys.sorted()) running \(core.settling.running.sorted()), loading \(loading.keys.sorted()), "
            + "writer busy \(writer.isBusy), flights \(refreshes.count), retired records \(state.retiredCount)"
    }
}
