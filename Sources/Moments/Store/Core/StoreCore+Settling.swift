import MomentsObservability

/// Settling answers of unknown order with the server: a refresh of the timeline sent
/// after they arrived.
extension StoreCore {
    /// Has the server settle `userID`'s timeline: a refresh sent after `since`.
    mutating func scheduleSettling(_ userID: String, since: StoreInstant, into actions: inout [Action]) {
        if brokenRules.contains(.neverSettle) { return }
        if let current = settling.needed[userID], current >= since {} else { settling.needed[userID] = since }
        guard settling.running.insert(userID).inserted else { return }
        actions.append(.settle(userID: userID))
    }

    /// What the settling of `userID` does next: a refetch while one is needed (joining a
    /// refresh in flight: one sent after the instant asked for, or not sent yet, settles
    /// it; an older one does not), then nothing.
    mutating func settleNext(_ userID: String, into actions: inout [Action]) {
        guard let since = settling.needed[userID] else {
            settling.running.remove(userID)
            return
        }
        if let phase = refreshes.inFlight[userID] {
            if phase.isAfter(since) { settling.needed[userID] = nil }
            actions.append(.refetch(userID: userID, joining: true))
        } else {
            settling.needed[userID] = nil
            actions.append(.log(.info, "refetching to settle answers whose order cannot be known", userID: userID, error: nil))
            actions.append(.refetch(userID: userID, joining: false))
        }
    }
}
