import MomentsSupport

/// The live continuations of every user's update streams.
///
/// Guarded by a mutex rather than the store's actor, so a stream's `onTermination`
/// removes its continuation at once, from whatever thread ends it. Values are yielded
/// outside the lock: `onTermination` takes the same lock, and a yield may trigger it.
/// Subscribers are kept in the order they came, and woken in that order.
final class SubscriberRegistry<Value: Sendable>: Sendable {
    typealias Continuation = AsyncStream<Value>.Continuation

    /// One user's subscribers: insertion-ordered, O(1) removal by tombstone.
    private struct Subscribers {
        var slots: [(id: Int, continuation: Continuation)?] = []
        var positions: [Int: Int] = [:]

        var count: Int { positions.count }

        mutating func add(_ id: Int, _ continuation: Continuation) {
            positions[id] = slots.count
            slots.append((id, continuation))
        }

        mutating func remove(_ id: Int) {
            guard let position = positions.removeValue(forKey: id) else { return }
            slots[position] = nil
            if slots.count > 32, positions.count * 2 < slots.count { compact() }
        }

        private mutating func compact() {
            slots = slots.filter { $0 != nil }
            for (position, slot) in slots.enumerated() {
                if let slot { positions[slot.id] = position }
            }
        }

        var continuations: [Continuation] { slots.compactMap { $0?.continuation } }
    }

    private struct State {
        var nextID = 0
        var byUser: [String: Subscribers] = [:]
    }

    private let state = PThreadMutex(State())

    /// Makes a stream for `userID`, registered before it is returned.
    func subscribe(_ userID: String) -> (AsyncStream<Value>, Continuation) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { state in
            state.nextID += 1
            state.byUser[userID, default: Subscribers()].add(state.nextID, continuation)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            self?.remove(id, of: userID)
        }
        return (stream, continuation)
    }

    private func remove(_ id: Int, of userID: String) {
        state.withLock { state in
            state.byUser[userID]?.remove(id)
            if state.byUser[userID]?.count == 0 { state.byUser[userID] = nil }
        }
    }

    /// Sends `value` to every subscriber of `userID`, in subscription order.
    func yield(_ value: Value, to userID: String) {
        let continuations = state.withLock { $0.byUser[userID]?.continuations ?? [] }
        for continuation in continuations { continuation.yield(value) }
    }

    func count(for userID: String) -> Int {
        state.withLock { $0.byUser[userID]?.count ?? 0 }
    }

    func hasSubscribers(_ userID: String) -> Bool {
        state.withLock { $0.byUser[userID] != nil }
    }

    /// The users among `users` with at least one subscriber.
    func subscribed(among users: Set<String>) -> [String] {
        state.withLock { state in
            if users.count <= state.byUser.count {
                return users.filter { state.byUser[$0] != nil }
            }
            return state.byUser.keys.filter { users.contains($0) }
        }
    }

    /// Whether anyone subscribes to any user.
    var isEmpty: Bool {
        state.withLock { $0.byUser.isEmpty }
    }

    /// Ends every stream.
    func finishAll() {
        let all = state.withLock { state in
            defer { state.byUser.removeAll() }
            return state.byUser.values.flatMap(\.continuations)
        }
        for continuation in all { continuation.finish() }
    }
}
