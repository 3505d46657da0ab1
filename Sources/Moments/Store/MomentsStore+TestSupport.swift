import Foundation
import MomentsNetworking
import MomentsSupport

/// What tests and simulations read of a store's inner state: `package`, never public.
extension MomentsStore {
    /// The confirmed value of every moment in memory (likes in flight left out), for
    /// tests that check confirmed state only moves forward.
    package var confirmedMoments: [String: Moment] {
        state.records.mapValues(\.value)
    }


    /// How many `setLike` calls of `userID` have begun and not returned (for tests).
    package func likeCallsInFlight(for userID: String) -> Int { likeBook.inFlightPerUser[userID] ?? 0 }

    /// Whether nothing is in flight now (no refresh, like, refetch or write), without
    /// waiting (for tests that poll).
    package var isIdle: Bool { activity.count == 0 && !writer.isBusy }

    /// What the store has in flight, for tests and diagnostics.
    package var diagnostics: String {
        "activity \(activity.count), refreshes \(refreshBook.inFlight.sorted { $0.key < $1.key }.map { "\($0.key)\($0.value == .loading ? "(reading)" : "(sent)")" }), likes \(likeBook.chains.keys.map { "\($0.userID)/\($0.momentID)" }.sorted()), "
            + "convergence \(convergence.needed.keys.sorted()) tasks \(convergence.tasks.keys.sorted()), loading \(refreshBook.loading.keys.sorted()), "
            + "writer busy \(writer.isBusy), flights \(refreshes.count), retired records \(state.retiredCount)"
    }
}
