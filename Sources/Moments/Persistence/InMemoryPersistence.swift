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
        contents.apply(batch)
    }

    /// The timeline saved for `userID`, or `nil` (see ``MomentsPersistence``).
    public func load(userID: String) -> MomentsDetails? {
        contents.timelines[userID]?.assemble(for: userID) { contents.moments[$0] }
    }

    /// Saves `batch` all or nothing (see ``MomentsPersistence``).
    public func save(_ batch: PersistenceBatch) throws {
        for (userID, timeline) in batch.timelines {
            if let duplicate = timeline.duplicateMomentID {
                throw PersistenceError.duplicateMoment(duplicate, location: "memory", userID: userID)
            }
            for entry in timeline.entries where batch.moments[entry.momentID] == nil && contents.moments[entry.momentID] == nil {
                throw PersistenceError.missingMoment(entry.momentID, location: "memory", userID: userID)
            }
        }
        contents.apply(batch)
    }

    /// The users whose saved timelines hold `momentID`.
    public func userIDs(holding momentID: String) -> [String] {
        contents.timelines.compactMap { userID, timeline in timeline.entries.contains { $0.momentID == momentID } ? userID : nil }
    }

    /// Removes `userID`'s timeline and the moments no other timeline holds.
    public func remove(userID: String) {
        guard let old = contents.timelines.removeValue(forKey: userID) else { return }
        contents.release(old.entries)
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

        /// Applies a validated batch: new holders are counted before old ones are released,
        /// so a moment passing from one timeline to another in the batch is never dropped.
        mutating func apply(_ batch: PersistenceBatch) {
            for timeline in batch.timelines.values {
                for entry in timeline.entries { holderCounts[entry.momentID, default: 0] += 1 }
            }
            for (id, moment) in batch.moments where holderCounts[id] != nil {
                moments[id] = moment
            }
            for (userID, timeline) in batch.timelines {
                if let old = timelines.updateValue(timeline, forKey: userID) { release(old.entries) }
            }
        }

        /// Counts `entries` as no longer held, dropping the moments no timeline holds.
        mutating func release(_ entries: [StoredTimeline.Entry]) {
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
