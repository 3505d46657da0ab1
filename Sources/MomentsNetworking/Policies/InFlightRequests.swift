import MomentsSupport

/// The requests a client has in flight, so ``HTTPClient/cancelAll()`` can cancel them and
/// a latest-wins request can cancel the one it replaces.
final class InFlightRequests: Sendable {
    private struct State {
        var nextID = 0
        var cancellers: [Int: @Sendable () -> Void] = [:]
        var latest: [String: Int] = [:]
        var members: [String: Set<Int>] = [:]
    }

    private let state = PThreadMutex(State())

    /// Registers a request; if `latestWinsKey` names one already in flight, that one is
    /// cancelled. Returns the id to unregister with.
    func register(latestWinsKey: String?, groups: Set<String> = [], cancel: @escaping @Sendable () -> Void) -> Int {
        let (id, replaced) = state.withLock { state -> (Int, (@Sendable () -> Void)?) in
            state.nextID += 1
            let id = state.nextID
            state.cancellers[id] = cancel
            for group in groups { state.members[group, default: []].insert(id) }
            var replaced: (@Sendable () -> Void)?
            if let latestWinsKey {
                if let previous = state.latest[latestWinsKey] { replaced = state.cancellers[previous] }
                state.latest[latestWinsKey] = id
            }
            return (id, replaced)
        }
        replaced?()
        return id
    }

    func unregister(_ id: Int, latestWinsKey: String?, groups: Set<String> = []) {
        state.withLock { state in
            state.cancellers[id] = nil
            for group in groups {
                state.members[group]?.remove(id)
                if state.members[group]?.isEmpty == true { state.members[group] = nil }
            }
            if let latestWinsKey, state.latest[latestWinsKey] == id { state.latest[latestWinsKey] = nil }
        }
    }

    func cancelAll() {
        let cancellers = state.withLock { Array($0.cancellers.values) }
        for cancel in cancellers { cancel() }
    }

    /// Cancels the requests in flight that belong to `group`.
    func cancelAll(in group: String) {
        let cancellers = state.withLock { state in (state.members[group] ?? []).compactMap { state.cancellers[$0] } }
        for cancel in cancellers { cancel() }
    }

    var count: Int { state.withLock { $0.cancellers.count } }

    /// The number of requests in flight in `group`.
    func count(in group: String) -> Int { state.withLock { $0.members[group]?.count ?? 0 } }
}
