import MomentsSupport

/// The store-wide feed behind ``MomentsStore/changes()``: numbers each change, keeps the
/// latest ones for catch-up, and hands them to every consumer through a bounded buffer
/// of its own.
///
/// A consumer that falls more than its buffer behind loses its oldest changes and gets
/// a ``MomentsChange/Kind/gap(missed:)`` marker instead, so a slow consumer never grows
/// memory. Changes are numbered and placed in every buffer under the feed's lock, so
/// every consumer sees them in one order; each consumer has a lock of its own for
/// taking them, so consumers never contend with each other. Changes are handed over
/// outside any lock only to consumers waiting for one.
package final class ChangeFeed: Sendable {
    private struct State {
        var lastSequence: UInt64 = 0
        var log: RecentLog<MomentsChange>
        var consumers: [Int: FeedConsumer] = [:]
        var nextConsumerID = 0
        var isFinished = false
    }

    private let bufferSize: Int
    private let state: PThreadMutex<State>
    /// Counts the gaps consumers fall into, and (every 64 changes) the slowest
    /// consumer's backlog; `nil` measures nothing.
    private let instruments: StoreInstruments?

    /// - Parameters:
    ///   - bufferSize: The most changes a consumer may have waiting.
    ///   - logSize: The most recent changes kept for ``subscribe(after:)``.
    package convenience init(bufferSize: Int, logSize: Int) {
        self.init(bufferSize: bufferSize, logSize: logSize, instruments: nil)
    }

    init(bufferSize: Int, logSize: Int, instruments: StoreInstruments?) {
        self.bufferSize = max(1, bufferSize)
        state = PThreadMutex(State(log: RecentLog(capacity: logSize)))
        self.instruments = instruments.flatMap { $0.isMeasuring ? $0 : nil }
    }

    /// Numbers `kind` and delivers it; returns its sequence.
    @discardableResult
    package func publish(_ kind: MomentsChange.Kind) -> UInt64 {
        state.withLock { state -> UInt64 in
            state.lastSequence += 1
            let change = MomentsChange(sequence: state.lastSequence, kind: kind)
            state.log.append(change)
            // Resuming only schedules the waiting consumer, which then takes its own
            // lock, never this one: safe under the lock, and it spares a list.
            var gaps = 0
            for consumer in state.consumers.values {
                let (waiter, gapBegan) = consumer.deliver(change, bufferSize: bufferSize)
                waiter?.resume(returning: change)
                if gapBegan { gaps += 1 }
            }
            if let instruments {
                for _ in 0..<gaps { instruments.gap() }
                if state.lastSequence % 64 == 0 {
                    instruments.slowestConsumerBacklog(state.consumers.values.map(\.backlog).max() ?? 0)
                }
            }
            return state.lastSequence
        }
    }

    /// The sequence of the latest change, 0 before the first.
    var lastSequence: UInt64 { state.withLock { $0.lastSequence } }

    /// Whether anyone consumes changes (for tests and diagnostics).
    package var consumerCount: Int { state.withLock { $0.consumers.count } }

    /// A new consumer's stream: with `after`, the retained changes after that sequence
    /// first (or a gap marker if some are no longer retained), then every new change.
    package func subscribe(after: UInt64?) -> AsyncStream<MomentsChange> {
        let (id, consumer) = state.withLock { state -> (Int, FeedConsumer) in
            state.nextConsumerID += 1
            var missed: ClosedRange<UInt64>?
            var buffer = Ring<MomentsChange>()
            if let after, after < state.lastSequence {
                let oldest = state.log.first?.sequence ?? state.lastSequence + 1
                if after + 1 < oldest { missed = (after + 1)...(oldest - 1) }
                for change in state.log where change.sequence > after { buffer.append(change) }
            }
            let consumer = FeedConsumer(buffer: buffer, missed: missed, isFinished: state.isFinished)
            state.consumers[state.nextConsumerID] = consumer
            return (state.nextConsumerID, consumer)
        }
        return StreamSubscription.stream(next: { await consumer.next() }, end: { [weak self] in self?.remove(id) })
    }

    /// Ends every stream: consumers get what is buffered, then the end.
    package func finishAll() {
        let waiters = state.withLock { state -> [FeedConsumer.Waiter] in
            state.isFinished = true
            return state.consumers.values.compactMap { $0.finish(dropping: false) }
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    /// Removes consumer `id`: its stream ends at once.
    fileprivate func remove(_ id: Int) {
        let consumer = state.withLock { $0.consumers.removeValue(forKey: id) }
        consumer?.finish(dropping: true)?.resume(returning: nil)
    }
}

/// One consumer's buffer, behind a lock of its own.
private final class FeedConsumer: Sendable {
    /// Unchecked: a waiter is stored, and taken out, only under the lock, and whoever
    /// takes it out resumes it (``deliver(_:bufferSize:)`` and ``finish(dropping:)``
    /// hand it to the feed, which resumes it); ``next()`` resumes one it did not store.
    /// So each is resumed exactly once, and a checked continuation's allocation is
    /// spared on every change a waiting consumer is handed: 10,000 per change with
    /// 10,000 consumers.
    typealias Waiter = UnsafeContinuation<MomentsChange?, Never>

    private struct State {
        var buffer: Ring<MomentsChange>
        var missed: ClosedRange<UInt64>?
        var waiter: Waiter?
        /// No more changes will come: hand out what is buffered, then end.
        var isFinished: Bool
        /// Removed from the feed: end now.
        var isRemoved = false
    }

    private let state: PThreadMutex<State>

    init(buffer: Ring<MomentsChange>, missed: ClosedRange<UInt64>?, isFinished: Bool) {
        state = PThreadMutex(State(buffer: buffer, missed: missed, isFinished: isFinished))
    }

    /// Buffers `change`, or returns the waiting continuation to hand it to; and whether
    /// the consumer just fell behind (a new gap began).
    func deliver(_ change: MomentsChange, bufferSize: Int) -> (Waiter?, gapBegan: Bool) {
        state.withLock { state in
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            var gapBegan = false
            while state.buffer.count >= bufferSize, let dropped = state.buffer.popFirst() {
                if state.missed == nil { gapBegan = true }
                state.missed = (state.missed?.lowerBound ?? dropped.sequence)...dropped.sequence
            }
            state.buffer.append(change)
            return (nil, gapBegan)
        }
    }

    /// The changes waiting for the consumer.
    var backlog: Int { state.withLock { $0.buffer.count } }

    /// Marks the end; returns the waiting continuation to end.
    func finish(dropping: Bool) -> Waiter? {
        state.withLock { state in
            state.isFinished = true
            if dropping {
                state.isRemoved = true
                state.buffer = Ring()
            }
            defer { state.waiter = nil }
            return state.waiter
        }
    }

    /// The next change (a gap marker first if some were lost); `nil` at the end.
    func next() async -> MomentsChange? {
        await withUnsafeContinuation { (continuation: Waiter) in
            let ready = state.withLock { state -> MomentsChange?? in
                if state.isRemoved || Task.isCancelled { return .some(nil) }
                if let missed = state.missed {
                    state.missed = nil
                    return MomentsChange(sequence: missed.upperBound, kind: .gap(missed: missed))
                }
                if let change = state.buffer.popFirst() { return change }
                if state.isFinished { return .some(nil) }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}

