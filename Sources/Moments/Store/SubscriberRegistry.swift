import Synchronization

/// The live continuations of every user's update streams.
///
/// Guarded by a mutex rather than the store's actor, so a stream's `onTermination`
/// removes its continuation at once, from whatever thread ends it. Values are yielded
/// outside the lock: `onTermination` takes the same lock, and a yield may trigger it.
final class SubscriberRegistry<Value: Sendable>: Sendable {
    private struct State {
        var nextID = 0
        var byUser: [String: [Int: AsyncStream<Value>.Continuation]] = [:]
    }

    private let state = Mutex(State())

    /// Makes a stream for `userID`, registered before it is returned.
    func subscribe(_ userID: String) -> (AsyncStream<Value>, AsyncStream<Value>.Continuation) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextID += 1
            state.byUser[userID, default: [:]][state.nextID] = continuation
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.remove(id, of: userID)
        }
        return (stream, continuation)
    }

    private func remove(_ id: Int, of userID: String) {
        state.withLock { state in
            state.byUser[userID]?[id] = nil
            if state.byUser[userID]?.isEmpty == true { state.byUser[userID] = nil }
        }
    }

    /// Sends `value` to every subscriber of `userID`.
    func yield(_ value: Value, to userID: String) {
        let continuations = state.withLock { state in state.byUser[userID].map { Array($0.values) } ?? [] }
        for continuation in continuations { continuation.yield(value) }
    }

    func count(for userID: String) -> Int {
        state.withLock { $0.byUser[userID]?.count ?? 0 }
    }

    var totalCount: Int {
        state.withLock { $0.byUser.values.reduce(0) { $0 + $1.count } }
    }

    func hasSubscribers(_ userID: String) -> Bool {
        state.withLock { $0.byUser[userID] != nil }
    }

    /// Ends every stream.
    func finishAll() {
        let all = state.withLock { state in
            defer { state.byUser.removeAll() }
            return state.byUser.values.flatMap(\.values)
        }
        for continuation in all { continuation.finish() }
    }
}
