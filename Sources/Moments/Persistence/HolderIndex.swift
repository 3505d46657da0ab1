/// Which users' timelines hold each moment, and the reverse, kept in step.
struct HolderIndex {
    private(set) var byMoment: [String: Set<String>] = [:]
    private var byUser: [String: [String]] = [:]

    /// The users holding `momentID`.
    func users(holding momentID: String) -> Set<String> {
        byMoment[momentID] ?? []
    }

    /// Records that `userID`'s timeline holds exactly `momentIDs` (none: removed).
    mutating func set(_ momentIDs: [String], for userID: String) {
        for id in byUser[userID] ?? [] {
            byMoment[id]?.remove(userID)
            if byMoment[id]?.isEmpty == true { byMoment[id] = nil }
        }
        byUser[userID] = momentIDs.isEmpty ? nil : momentIDs
        for id in momentIDs { byMoment[id, default: []].insert(userID) }
    }
}
