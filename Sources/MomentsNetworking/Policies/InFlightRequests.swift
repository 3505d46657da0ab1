import Synchronization

/// The requests a client has in flight, so ``HTTPClient/cancelAll()`` can cancel them and
/// a latest-wins request can cancel the one it replaces.
final class InFlightRequests: Sendable {
    private struct State {
        var nextID = 0
        var cancellers: [Int: @Sendable () -> Void] = [:]
        var latest: [String: Int] = [:]
    }

    private let state = Mutex(State())

    /// Registers a request; if `latestWinsKey` names one already in flight, that one is
    /// cancelled. Returns the id to unregister with.
    func register(latestWinsKey: String?, cancel: @escaping @Sendable () -> Void) -> Int {
        let (id, replaced) = state.withLock { state -> (Int, (@Sendable () -> Void)?) in
            state.nextID += 1
            let id = state.nextID
            state.cancellers[id] = cancel
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

    func unregister(_ id: Int, latestWinsKey: String?) {
        state.withLock { state in
            state.cancellers[id] = nil
            if let latestWinsKey, state.latest[latestWinsKey] == id { state.latest[latestWinsKey] = nil }
        }
    }

    func cancelAll() {
        let cancellers = state.withLock { Array($0.cancellers.values) }
        for cancel in cancellers { cancel() }
    }

    var count: Int { state.withLock { $0.cancellers.count } }
}
