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
        /// The live continuations in order, kept between changes so that a yield copies
        /// no list; `nil` after a removal until the next yield rebuilds it.
        private var live: [Continuation]? = []

        var count: Int { positions.count }

        mutating func add(_ id: Int, _ continuation: Continuation) {
            positions[id] = slots.count
            slots.append((id, continuation))
            live?.append(continuation)
        }

        mutating func remove(_ id: Int) {
            guard let position = positions.removeValue(forKey: id) else { return }
            slots[position] = nil
            live = nil
            if slots.count > 32, positions.count * 2 < slots.count { compact() }
        }

        /// The live continuations in subscription order.
        mutating func ordered() -> [Continuation] {
            if let live { return live }
            let rebuilt = continuations
            live = rebuilt
            return rebuilt
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
    /// Told the number of subscribers whenever it changes, if set.
    private let onCount: (@Sendable (Int) -> Void)?

    init(onCount: (@Sendable (Int) -> Void)? = nil) {
        self.onCount = onCount
    }

    private func total(_ state: State) -> Int { state.byUser.values.reduce(0) { $0 + $1.count } }

    /// Makes a stream for `userID`, registered before it is returned.
    func subscribe(_ userID: String) -> (AsyncStream<Value>, Continuation) {
        let (stream, continuation) = AsyncStream<Value>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let (id, count) = state.withLock { state in
            state.nextID += 1
            state.byUser[userID, default: Subscribers()].add(state.nextID, continuation)
            return (state.nextID, onCount == nil ? 0 : total(state))
        }
        onCount?(count)
        continuation.onTermination = { [weak self] _ in
            self?.remove(id, of: userID)
        }
        return (stream, continuation)
    }

    private func remove(_ id: Int, of userID: String) {
        let count = state.withLock { state in
            state.byUser[userID]?.remove(id)
            if state.byUser[userID]?.count == 0 { state.byUser[userID] = nil }
            return onCount == nil ? 0 : total(state)
        }
        onCount?(count)
    }

    /// The users among `users` with at least one subscriber, each with its subscribers'
    /// continuations in subscription order: who to send a value to, under one lock.
    /// Yield outside the registry (see ``SubscriberRegistry``).
    func subscribers(among users: Set<String>) -> [(userID: String, continuations: [Continuation])] {
        state.withLock { state in
            var found: [(userID: String, continuations: [Continuation])] = []
            guard !state.byUser.isEmpty else { return found }
            for user in users {
                guard let continuations = state.byUser[user]?.ordered() else { continue }
                found.append((user, continuations))
            }
            return found
        }
    }

    func count(for userID: String) -> Int {
        state.withLock { $0.byUser[userID]?.count ?? 0 }
    }

    func hasSubscribers(_ userID: String) -> Bool {
        state.withLock { $0.byUser[userID] != nil }
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
