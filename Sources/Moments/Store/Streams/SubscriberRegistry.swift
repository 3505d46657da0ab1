import MomentsSupport

/// The live mailboxes of every user's update streams.
///
/// Guarded by a mutex rather than the store's actor, so a stream that ends, is
/// cancelled or is dropped removes its mailbox at once, from whatever thread ends it.
/// Values are delivered outside the lock. Subscribers are kept in the order they came,
/// and woken in that order.
final class SubscriberRegistry<Value: Sendable>: Sendable {
    typealias Mailbox = LatestValueMailbox<Value>

    /// One user's subscribers: insertion-ordered, O(1) removal by tombstone.
    private struct Subscribers {
        var slots: [(id: Int, mailbox: Mailbox)?] = []
        var positions: [Int: Int] = [:]
        /// The live mailboxes in order, kept between changes so that a delivery copies
        /// no list; `nil` after a removal until the next delivery rebuilds it.
        private var live: [Mailbox]? = []

        var count: Int { positions.count }

        mutating func add(_ id: Int, _ mailbox: Mailbox) {
            positions[id] = slots.count
            slots.append((id, mailbox))
            live?.append(mailbox)
        }

        /// Removes subscriber `id`; returns its mailbox.
        mutating func remove(_ id: Int) -> Mailbox? {
            guard let position = positions.removeValue(forKey: id) else { return nil }
            let mailbox = slots[position]?.mailbox
            slots[position] = nil
            live = nil
            if slots.count > 32, positions.count * 2 < slots.count { compact() }
            return mailbox
        }

        /// The live mailboxes in subscription order, if kept since the last removal
        /// (read without changing anything).
        var kept: [Mailbox]? { live }

        /// The live mailboxes in subscription order.
        mutating func ordered() -> [Mailbox] {
            if let live { return live }
            let rebuilt = mailboxes
            live = rebuilt
            return rebuilt
        }

        private mutating func compact() {
            slots = slots.filter { $0 != nil }
            for (position, slot) in slots.enumerated() {
                if let slot { positions[slot.id] = position }
            }
        }

        var mailboxes: [Mailbox] { slots.compactMap { $0?.mailbox } }
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

    /// Makes a stream for `userID`, registered before it is returned, and its mailbox
    /// (to deliver the current value to it first). The stream ends when its consumer is
    /// cancelled or stops, when it is dropped without being iterated, or at
    /// ``finishAll()``.
    func subscribe(_ userID: String) -> (AsyncStream<Value>, Mailbox) {
        let mailbox = Mailbox()
        let (id, count) = state.withLock { state in
            state.nextID += 1
            state.byUser[userID, default: Subscribers()].add(state.nextID, mailbox)
            return (state.nextID, onCount == nil ? 0 : total(state))
        }
        onCount?(count)
        let stream = StreamSubscription.stream(next: { await mailbox.next() }, end: { [weak self] in self?.remove(id, of: userID) })
        return (stream, mailbox)
    }

    fileprivate func remove(_ id: Int, of userID: String) {
        let (mailbox, count) = state.withLock { state -> (Mailbox?, Int) in
            let mailbox = state.byUser[userID]?.remove(id)
            if state.byUser[userID]?.count == 0 { state.byUser[userID] = nil }
            return (mailbox, onCount == nil || mailbox == nil ? 0 : total(state))
        }
        guard let mailbox else { return }
        mailbox.finish()
        onCount?(count)
    }

    /// `userID`'s subscribers' mailboxes in subscription order (who to send a value to),
    /// or `nil` if they have none. Deliver outside the registry (see
    /// ``SubscriberRegistry``).
    func subscribers(of userID: String) -> [Mailbox]? {
        state.withLock { state in state.byUser.isEmpty ? nil : Self.mailboxes(of: userID, in: &state) }
    }

    /// The mailboxes of `userID`'s subscribers, in place while kept (nearly always: they
    /// are rebuilt only after a removal). Only a rebuild goes through `ordered()`: a
    /// mutating call through the dictionary's subscript allocates its accessor's frame
    /// even for a user who has no subscribers, and the caller's `isEmpty` check spares
    /// the lookup's hash when nobody subscribes (3 allocations and a hash per refresh
    /// otherwise).
    private static func mailboxes(of userID: String, in state: inout State) -> [Mailbox]? {
        if let kept = state.byUser[userID]?.kept { return kept }
        return state.byUser[userID]?.ordered()
    }

    func count(for userID: String) -> Int {
        state.withLock { $0.byUser[userID]?.count ?? 0 }
    }

    func hasSubscribers(_ userID: String) -> Bool {
        state.withLock { $0.byUser[userID] != nil }
    }

    /// Ends every stream; with `keepingLast`, each consumer first takes the value
    /// still waiting for it.
    func finishAll(keepingLast: Bool = false) {
        let all = state.withLock { state in
            defer { state.byUser.removeAll() }
            return state.byUser.values.flatMap(\.mailboxes)
        }
        for mailbox in all { mailbox.finish(keepingLast: keepingLast) }
    }
}
