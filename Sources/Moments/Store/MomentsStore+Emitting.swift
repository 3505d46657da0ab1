import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsObservability

/// Settling answers of unknown order with the server, and emitting changes to
/// `changes()` consumers and `updates(for:)` subscribers.
extension MomentsStore {
    // MARK: - Settling

    /// Has the server settle `userID`'s timeline: a refresh sent after `since`.
    func scheduleConvergence(_ userID: String, since: StoreInstant) {
        if let current = convergence.needed[userID], current >= since {} else { convergence.needed[userID] = since }
        guard convergence.tasks[userID] == nil else { return }
        beginActivity()
        convergence.tasks[userID] = Task {
            await self.converge(userID)
            self.endActivity()
        }
    }

    private func converge(_ userID: String) async {
        defer { convergence.tasks[userID] = nil }
        while let since = convergence.needed[userID] {
            if let phase = refreshBook.inFlight[userID] {
                // A refresh sent after `since` (or not sent yet) settles it; an older one does not.
                if phase.isAfter(since) { convergence.needed[userID] = nil }
                _ = try? await refresh(userID: userID)
                continue
            }
            convergence.needed[userID] = nil
            log(.info, "refetching to settle answers whose order cannot be known", userID: userID, error: nil)
            do {
                _ = try await refresh(userID: userID)
            } catch {
                guard lifecycle.isRunning else { return }  // shutting down: nothing more is settled
                log(.warning, "the refetch to settle answers failed; the next refresh will", userID: userID, error: error)
                configuration.observer?(.refetchToSettleFailed(userID: userID))
                return
            }
        }
    }

    // MARK: - Emitting

    /// Emits what applying an answer for `userID`'s timeline changed: each moment whose
    /// confirmed value changed, to every holder (but to the liker, while their own like
    /// of it is still in flight: its end emits it to them); each moment whose `isLiked`
    /// changed for `userID` alone, to them; then the timeline's change; then snapshots.
    func publish(_ applied: StoreState.Applied, for userID: String, likedBy: String?, likedMoment: String?) {
        let pendingLike = likedMoment.flatMap { state.intentGeneration(of: userID, on: $0) != nil ? $0 : nil }
        var users: Set<String> = []
        // The owner's timeline, to read their `isLiked` at the positions the answer gave.
        let owner = applied.changedPositions.count == applied.changedMoments.count ? state.timelines[userID] : nil
        for (offset, id) in applied.changedMoments.enumerated() {
            let audience: StoreState.Audience = id == pendingLike ? .holdersExcept(userID) : .holders
            let hint = owner.map { StoreState.EntryHint(userID: userID, timeline: $0, index: applied.changedPositions[offset]) }
            if let change = publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: audience, hint: hint) {
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
                    publishMoment(id, likedBy: id == likedMoment ? likedBy : nil, phase: .confirmed, audience: .only(userID))
                }
            }
        }
        if let timeline = applied.timeline { feed.publish(.timeline(timeline)) }
        if ownerChanged, !userID.isEmpty, !users.contains(userID) { users.insert(userID) }
        publishSnapshots(to: users)
    }

    /// Emits the change of `momentID` as `audience` sees it; returns it.
    @discardableResult
    func publishMoment(
        _ momentID: String, likedBy: String?, phase: MomentChange.Phase, audience: StoreState.Audience, hint: StoreState.EntryHint? = nil
    ) -> MomentChange? {
        guard let change = state.momentChange(momentID, phase: phase, likedBy: likedBy, audience: audience, hint: hint) else { return nil }
        feed.publish(.moment(change))
        return change
    }

    /// Sends a new snapshot to the subscribers of each of `users`' timelines.
    func publishSnapshots(to users: Set<String>) {
        guard !users.isEmpty else { return }
        for (user, mailboxes) in snapshots.subscribers(among: users) {
            guard let details = state.displayedTimeline(user) else { continue }
            for mailbox in mailboxes { mailbox.deliver(details) }
        }
    }
}
