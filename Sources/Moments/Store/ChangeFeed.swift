import Synchronization

/// The store-wide feed behind ``MomentsStore/changes()``: numbers each change, keeps the
/// latest ones for catch-up, and hands them to every consumer through a bounded buffer
/// of its own.
///
/// A consumer that falls more than its buffer behind loses its oldest changes and gets
/// a ``MomentsChange/Kind/gap(missed:)`` marker instead, so a slow consumer never grows
/// memory. Changes are delivered outside the lock only to consumers waiting for one;
/// the rest find them in their buffers.
package final class ChangeFeed: Sendable {
    fileprivate struct Consumer {
        var buffer = Ring<MomentsChange>()
        var missed: ClosedRange<UInt64>?
        var waiter: CheckedContinuation<MomentsChange?, Never>?
        var isFinished = false
    }

    private struct State {
        var lastSequence: UInt64 = 0
        var log = Ring<MomentsChange>()
        var consumers: [Int: Consumer] = [:]
        var nextConsumerID = 0
        var isFinished = false
    }

    private let bufferSize: Int
    private let logSize: Int
    private let state = Mutex(State())

    /// - Parameters:
    ///   - bufferSize: The most changes a consumer may have waiting.
    ///   - logSize: The most recent changes kept for ``subscribe(after:)``.
    package init(bufferSize: Int, logSize: Int) {
        self.bufferSize = max(1, bufferSize)
        self.logSize = max(0, logSize)
    }

    /// Numbers `kind` and delivers it; returns its sequence.
    @discardableResult
    package func publish(_ kind: MomentsChange.Kind) -> UInt64 {
        var resumed: [(CheckedContinuation<MomentsChange?, Never>, MomentsChange)] = []
        let sequence = state.withLock { state -> UInt64 in
            state.lastSequence += 1
            let change = MomentsChange(sequence: state.lastSequence, kind: kind)
            if logSize > 0 {
                if state.log.count == logSize { _ = state.log.popFirst() }
                state.log.append(change)
            }
            for id in state.consumers.keys {
                state.consumers[id]?.deliver(change, bufferSize: bufferSize, resumed: &resumed)
            }
            return state.lastSequence
        }
        for (waiter, change) in resumed { waiter.resume(returning: change) }
        return sequence
    }

    /// The sequence of the latest change, 0 before the first.
    var lastSequence: UInt64 { state.withLock { $0.lastSequence } }

    /// Whether anyone consumes changes (for tests and diagnostics).
    package var consumerCount: Int { state.withLock { $0.consumers.count } }

    /// A new consumer's stream: with `after`, the retained changes after that sequence
    /// first (or a gap marker if some are no longer retained), then every new change.
    package func subscribe(after: UInt64?) -> AsyncStream<MomentsChange> {
        let id = state.withLock { state -> Int in
            state.nextConsumerID += 1
            var consumer = Consumer()
            consumer.isFinished = state.isFinished
            if let after, after < state.lastSequence {
                let oldest = state.log.first?.sequence ?? state.lastSequence + 1
                if after + 1 < oldest { consumer.missed = (after + 1)...(oldest - 1) }
                for change in state.log where change.sequence > after { consumer.buffer.append(change) }
            }
            state.consumers[state.nextConsumerID] = consumer
            return state.nextConsumerID
        }
        let handle = ConsumerHandle(feed: self, id: id)
        return AsyncStream(unfolding: { await handle.next() }, onCancel: { handle.end() })
    }

    /// Ends every stream: consumers get what is buffered, then the end.
    package func finishAll() {
        let waiters = state.withLock { state -> [CheckedContinuation<MomentsChange?, Never>] in
            state.isFinished = true
            var waiters: [CheckedContinuation<MomentsChange?, Never>] = []
            for id in state.consumers.keys {
                state.consumers[id]?.isFinished = true
                if let waiter = state.consumers[id]?.waiter {
                    waiters.append(waiter)
                    state.consumers[id]?.waiter = nil
                }
            }
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
    }

    fileprivate func next(_ id: Int) async -> MomentsChange? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<MomentsChange?, Never>) in
                let ready = state.withLock { state -> MomentsChange?? in
                    guard var consumer = state.consumers[id] else { return .some(nil) }
                    defer { state.consumers[id] = consumer }
                    if let missed = consumer.missed {
                        consumer.missed = nil
                        return MomentsChange(sequence: missed.upperBound, kind: .gap(missed: missed))
                    }
                    if let change = consumer.buffer.popFirst() { return change }
                    if consumer.isFinished || Task.isCancelled { return .some(nil) }
                    consumer.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            remove(id)
        }
    }

    fileprivate func remove(_ id: Int) {
        let waiter = state.withLock { $0.consumers.removeValue(forKey: id)?.waiter }
        waiter?.resume(returning: nil)
    }
}

extension ChangeFeed.Consumer {
    fileprivate mutating func deliver(
        _ change: MomentsChange, bufferSize: Int,
        resumed: inout [(CheckedContinuation<MomentsChange?, Never>, MomentsChange)]
    ) {
        if let waiter {
            self.waiter = nil
            resumed.append((waiter, change))
            return
        }
        while buffer.count >= bufferSize, let dropped = buffer.popFirst() {
            missed = (missed?.lowerBound ?? dropped.sequence)...dropped.sequence
        }
        buffer.append(change)
    }
}

/// One consumer of a ``ChangeFeed``: removed from it when its stream ends, is
/// cancelled, or is dropped without being iterated.
private final class ConsumerHandle: Sendable {
    let feed: ChangeFeed
    let id: Int

    init(feed: ChangeFeed, id: Int) {
        self.feed = feed
        self.id = id
    }

    func next() async -> MomentsChange? {
        let change = await feed.next(id)
        if change == nil { feed.remove(id) }
        return change
    }

    func end() { feed.remove(id) }

    deinit { feed.remove(id) }
}

/// A first-in first-out queue over an array, with amortized O(1) removal at the front.
struct Ring<Element>: Sequence {
    private var storage: [Element] = []
    private var head = 0

    var count: Int { storage.count - head }
    var first: Element? { head < storage.count ? storage[head] : nil }

    mutating func append(_ element: Element) { storage.append(element) }

    mutating func popFirst() -> Element? {
        guard head < storage.count else { return nil }
        let element = storage[head]
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return element
    }

    func makeIterator() -> ArraySlice<Element>.Iterator { storage[head...].makeIterator() }
}
