/// A ``MomentsPersistence`` that keeps timelines in memory, for tests and for processes
/// that need no state across restarts.
public actor InMemoryPersistence: MomentsPersistence {
    /// Memory can always be written.
    public func checkWritable() {}

    private var contents = Contents()

    /// Creates a store, optionally holding `timelines` already.
    public init(_ timelines: [String: MomentsDetails] = [:]) {
        var batch = PersistenceBatch()
        for (userID, details) in timelines.sorted(by: { $0.key < $1.key }) {
            batch.merge(PersistenceBatch(timeline: details, for: userID))
        }
        contents.apply(batch, changes: contents.changes(in: batch))
        // Lists given here are not checked; the first save of each checks it whole.
        contents.unchecked = Set(batch.timelines.compactMap { $0.value.duplicateMomentID == nil ? nil : $0.key })
    }

    /// The timeline saved for `userID`, or `nil` (see ``MomentsPersistence``).
    public func load(userID: String) -> MomentsDetails? {
        contents.timelines[userID]?.assemble(for: userID) { contents.moments[$0] }
    }

    /// Saves `batch` all or nothing (see ``MomentsPersistence``).
    ///
    /// A timeline that keeps most of its stored list is checked and counted on the
    /// changed span alone (the run of ids the old and new lists share at their start
    /// and end is left as it is): the moments of the entries it keeps are stored,
    /// since the stored list holds them.
    public func save(_ batch: PersistenceBatch) throws {
        if contents.updateInPlace(batch) { return }
        let changes = contents.changes(in: batch)
        for (userID, timeline, change) in changes {
            let oldIsDistinct = contents.unchecked.isEmpty || !contents.unchecked.contains(userID)
            if let duplicate = change.duplicate(in: timeline, oldIsDistinct: oldIsDistinct) {
                throw PersistenceError.duplicateMoment(duplicate, location: "memory", userID: userID)
            }
            for entry in timeline.entries[change.inserted] where batch.moments[entry.momentID] == nil && contents.moments[entry.momentID] == nil {
                throw PersistenceError.missingMoment(entry.momentID, location: "memory", userID: userID)
            }
        }
        contents.apply(batch, changes: changes)
        if !contents.unchecked.isEmpty { contents.unchecked.subtract(batch.timelines.keys) }
    }

    /// The users whose saved timelines hold `momentID`.
    public func userIDs(holding momentID: String) -> [String] {
        contents.timelines.compactMap { userID, timeline in timeline.entries.contains { $0.momentID == momentID } ? userID : nil }
    }

    /// Removes `userID`'s timeline and the moments no other timeline holds.
    public func remove(userID: String) {
        guard let old = contents.timelines.removeValue(forKey: userID) else { return }
        contents.release(old.entries[...])
        contents.unchecked.remove(userID)
    }

    /// Every user with a saved timeline.
    public func userIDs() -> [String] {
        Array(contents.timelines.keys)
    }

    /// Removes every timeline and moment.
    public func removeAll() {
        contents = Contents()
    }

    private struct Contents {
        var timelines: [String: StoredTimeline] = [:]
        var moments: [String: Moment] = [:]
        /// How many timelines hold each moment.
        var holderCounts: [String: Int] = [:]
        /// Users whose stored list may name a moment twice (given to `init`).
        var unchecked: Set<String> = []

        typealias TimelineChange = (userID: String, timeline: StoredTimeline, change: EntryListChange)

        /// Writes `batch` where it changes only values in place, the common write of a
        /// refresh: every timeline keeps its stored (and checked) list, its owner or
        /// `isLiked`s may change, and every moment is stored already. Returns `false`, having written
        /// nothing, for any other batch.
        mutating func updateInPlace(_ batch: PersistenceBatch) -> Bool {
            // Checked first, then written: nothing is written unless all of it can be.
            // Each key is looked up once per pass, and values are compared where they lie.
            for index in batch.timelines.indices {
                let userID = batch.timelines.keys[index]
                guard unchecked.isEmpty || !unchecked.contains(userID), let stored = timelines.index(forKey: userID),
                      timelines.values[stored].hasSameList(as: batch.timelines.values[index].entries) else { return false }
            }
            for id in batch.moments.keys where moments.index(forKey: id) == nil { return false }
            for index in batch.timelines.indices {
                if let stored = timelines.index(forKey: batch.timelines.keys[index]) {
                    timelines.values[stored].adoptValues(of: batch.timelines.values[index])
                }
            }
            for index in batch.moments.indices {
                if let stored = moments.index(forKey: batch.moments.keys[index]) { moments.values[stored] = batch.moments.values[index] }
            }
            return true
        }

        /// How each timeline of `batch` changes the stored one.
        func changes(in batch: PersistenceBatch) -> [TimelineChange] {
            batch.timelines.map { userID, timeline in
                let change = timelines[userID].map { EntryListChange(from: $0.entries, to: timeline.entries) }
                return (userID, timeline, change ?? EntryListChange(inserting: timeline.entries))
            }
        }

        /// Applies a validated batch: new holders are counted before old ones are released,
        /// so a moment passing from one timeline to another in the batch is never dropped.
        /// Only the changed spans are counted: the entries a list keeps stay held.
        mutating func apply(_ batch: PersistenceBatch, changes: [TimelineChange]) {
            for (_, timeline, change) in changes {
                for entry in timeline.entries[change.inserted] { holderCounts[entry.momentID, default: 0] += 1 }
            }
            for (id, moment) in batch.moments where holderCounts[id] != nil {
                moments[id] = moment
            }
            for (userID, timeline, change) in changes {
                // The same list: its owner and `isLiked`s are written into the stored one,
                // which keeps no reference to the caller's (whose next change is then made
                // in place, not on a copy).
                if change.removed.isEmpty, change.inserted.isEmpty, let index = timelines.index(forKey: userID) {
                    timelines.values[index].adoptValues(of: timeline)
                } else if let old = timelines.updateValue(timeline, forKey: userID) {
                    release(old.entries[change.removed])
                }
            }
        }

        /// Counts `entries` as no longer held, dropping the moments no timeline holds.
        mutating func release(_ entries: ArraySlice<StoredTimeline.Entry>) {
            for entry in entries {
                holderCounts[entry.momentID, default: 1] -= 1
                if holderCounts[entry.momentID] == 0 {
                    holderCounts[entry.momentID] = nil
                    moments[entry.momentID] = nil
                }
            }
        }
    }
}

extension StoredTimeline {
    /// Whether `other` lists the same moments in the same order.
    fileprivate func hasSameList(as other: [Entry]) -> Bool {
        guard entries.count == other.count else { return false }
        for index in entries.indices where entries[index].momentID != other[index].momentID { return false }
        return true
    }

    /// Takes `other`'s owner and `isLiked`s, writing only what differs; `other` lists
    /// the same moments in the same order.
    fileprivate mutating func adoptValues(of other: StoredTimeline) {
        if userDetails != other.userDetails { userDetails = other.userDetails }
        for index in entries.indices where entries[index].isLiked != other.entries[index].isLiked {
            entries[index].isLiked = other.entries[index].isLiked
        }
    }
}
