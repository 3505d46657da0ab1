/// The timelines a store keeps in memory, bounded by count, least recently used evicted
/// first. Timelines whose users have live subscribers are never evicted. An index from
/// moment id to the users whose timelines hold it finds a shared moment at once.
struct TimelineCache {
    private struct Entry {
        var details: MomentsDetails
        var lastUse: UInt64
        /// The order of the request whose answer this is; 0 for data from persistence.
        var tick: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var holders: [String: Set<String>] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { entries.count }

    mutating func get(_ userID: String) -> MomentsDetails? {
        guard entries[userID] != nil else { return nil }
        clock += 1
        entries[userID]?.lastUse = clock
        return entries[userID]?.details
    }

    /// Reads without counting as a use.
    func peek(_ userID: String) -> MomentsDetails? {
        entries[userID]?.details
    }

    /// The users whose cached timelines hold the moment `momentID`.
    func users(holding momentID: String) -> Set<String> {
        holders[momentID] ?? []
    }

    /// The order of the request whose answer `userID`'s timeline is; 0 if none or persisted.
    func tick(of userID: String) -> UInt64 {
        entries[userID]?.tick ?? 0
    }

    /// Stores `details`, then evicts down to capacity, sparing users `isPinned` names.
    mutating func set(_ details: MomentsDetails, for userID: String, tick: UInt64, isPinned: (String) -> Bool) {
        clock += 1
        let old = entries[userID]?.details
        let sameMoments = old.map { $0.moments.elementsEqual(details.moments) { $0.id == $1.id } } ?? false
        if let old, !sameMoments { unindex(old, of: userID) }
        entries[userID] = Entry(details: details, lastUse: clock, tick: tick)
        if !sameMoments {
            for moment in details.moments { holders[moment.id, default: []].insert(userID) }
        }
        guard entries.count > capacity else { return }
        // Evict in a batch (down to 90% of capacity) so eviction costs O(log n) amortized.
        let target = max(1, capacity - capacity / 10)
        let candidates = entries.filter { $0.key != userID && !isPinned($0.key) }.sorted { $0.value.lastUse < $1.value.lastUse }
        for (victim, _) in candidates.prefix(entries.count - target) {
            remove(victim)
        }
    }

    mutating func remove(_ userID: String) {
        guard let old = entries.removeValue(forKey: userID) else { return }
        unindex(old.details, of: userID)
    }

    private mutating func unindex(_ details: MomentsDetails, of userID: String) {
        for moment in details.moments {
            holders[moment.id]?.remove(userID)
            if holders[moment.id]?.isEmpty == true { holders[moment.id] = nil }
        }
    }
}
