/// A ``MomentsPersistence`` that keeps timelines in memory, for tests and for processes
/// that need no state across restarts.
public actor InMemoryPersistence: MomentsPersistence {
    private var timelines: [String: MomentsDetails]

    /// Creates a store, optionally holding `timelines` already.
    public init(_ timelines: [String: MomentsDetails] = [:]) {
        self.timelines = timelines
    }

    public func load(userID: String) -> MomentsDetails? {
        timelines[userID]
    }

    public func save(_ details: MomentsDetails, for userID: String) {
        timelines[userID] = details
    }

    @discardableResult
    public func saveMoment(_ moment: Moment, for userID: String) -> Bool {
        guard let index = timelines[userID]?.moments.firstIndex(where: { $0.id == moment.id }) else { return false }
        timelines[userID]?.moments[index] = moment
        return true
    }

    public func remove(userID: String) {
        timelines[userID] = nil
    }

    public func userIDs() -> [String] {
        Array(timelines.keys)
    }

    public func removeAll() {
        timelines.removeAll()
    }
}
