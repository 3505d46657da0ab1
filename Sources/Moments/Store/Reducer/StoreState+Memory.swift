

/// Likes in flight, shown to their liker alone, and the timelines and records kept in
/// memory.
extension StoreState {
    // MARK: - Likes in flight

    /// Shows `intent` for `momentID` to its liker alone until
    /// ``removeIntent(_:from:generation:)``; returns whether the moment as the liker sees
    /// it changed.
    func setIntent(_ intent: LikeIntent, on momentID: String) -> Bool {
        guard let record = self.record(momentID) else { return false }
        version &+= 1
        let liker = intent.liker.id
        let isLiked = entryIsLiked(of: liker, on: momentID)
        let before = record.likerView(isLiked: isLiked, by: liker)
        record.revision &+= 1
        if let index = record.intents.firstIndex(where: { $0.liker.id == liker }) {
            record.intents[index] = intent
        } else {
            record.intents.append(intent)
        }
        return LikerView(value: record.value, isLiked: isLiked, intent: intent) != before
    }

    /// The generation of `likerID`'s like in flight on `momentID`, if any.
    func intentGeneration(of likerID: String, on momentID: String) -> Int? {
        record(momentID)?.intents.first { $0.liker.id == likerID }?.generation
    }

    /// Takes back `likerID`'s like on `momentID` if it is still call `generation`'s;
    /// returns whether it was, and whether the moment as the liker sees it changed.
    func removeIntent(_ likerID: String, from momentID: String, generation: Int) -> (removed: Bool, changed: Bool) {
        guard let record = self.record(momentID), record.intents.first(where: { $0.liker.id == likerID })?.generation == generation else {
            return (false, false)
        }
        version &+= 1
        let isLiked = entryIsLiked(of: likerID, on: momentID)
        let before = record.likerView(isLiked: isLiked, by: likerID)
        record.revision &+= 1
        record.intents.removeAll { $0.liker.id == likerID }
        let changed = record.likerView(isLiked: isLiked, by: likerID) != before
        retireIfUnused(momentID)
        return (true, changed)
    }

    // MARK: - Memory

    /// Marks `userID`'s timeline as just used; returns whether there is one.
    func touch(_ userID: String) -> Bool {
        guard let timeline = self.timeline(userID) else { return false }
        useClock += 1
        timeline.lastUse = useClock
        return true
    }

    /// Evicts least recently used timelines down to 90% of capacity once over it,
    /// sparing those `isPinned` names; returns the evicted users.
    func evictIfNeeded(isPinned: (String) -> Bool) -> [String] {
        guard timelines.count > capacity else { return [] }
        version &+= 1
        let target = max(1, capacity - capacity / 10)
        let victims = timelines.filter { !isPinned($0.key) }.sorted { $0.value.lastUse < $1.value.lastUse }
            .prefix(timelines.count - target).map(\.key)
        for userID in victims {
            guard let timeline = timelines.removeValue(forKey: userID) else { continue }
            divergentTimelines.remove(userID)
            for entry in timeline.entries { release(entry.momentID, from: userID) }
        }
        return victims
    }

    /// Forgets `userID`'s timeline and the records no one else holds.
    func forget(_ userID: String) {
        version &+= 1
        divergentTimelines.remove(userID)
        guard let timeline = timelines.removeValue(forKey: userID) else { return }
        for entry in timeline.entries { release(entry.momentID, from: userID) }
    }

    func release(_ momentID: String, from userID: String) {
        record(momentID)?.holders.remove(userID)
        retireIfUnused(momentID)
    }

    func retireIfUnused(_ momentID: String) {
        guard let record = self.record(momentID), record.holders.isEmpty, record.intents.isEmpty else { return }
        retired.insert(momentID)
    }

    /// Drops the retired records that no answer can predate any more: every request in
    /// flight (the oldest left at `oldestRequest`) was sent after their last evidence.
    func sweepRetired(oldestRequest: StoreInstant?) {
        guard !retired.isEmpty else { return }
        for id in retired {
            guard let record = records[id], record.holders.isEmpty, record.intents.isEmpty else {
                retired.remove(id)
                continue
            }
            if let oldestRequest, oldestRequest <= record.confirmation.received { continue }
            records[id] = nil
            retired.remove(id)
            divergentMoments.remove(id)
        }
    }

    /// The number of records no timeline in memory holds (for tests and diagnostics).
    var retiredCount: Int { retired.count }
}
