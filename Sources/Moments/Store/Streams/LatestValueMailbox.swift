import MomentsHTTP
import MomentsSupport
import Synchronization

/// One subscriber's newest value not yet taken: the state stream of
/// `MomentsStore.updates(for:)`, where a slow consumer gets the newest value and never a
/// backlog.
///
/// A value delivered while the consumer waits is handed to it; one delivered while it
/// is busy replaces the value still waiting, if any. It does the work of an
/// `AsyncStream` buffering the newest element with a lock and one optional, without a
/// queue: the store delivers a snapshot on every change, to every subscriber.
///
/// A consumer whose values come faster than a thread parks and wakes watches briefly
/// for its next value instead of parking (``ConsumerWatch`` decides when). Waking a
/// parked consumer costs the delivering thread, the store's, a system call on every
/// change: microseconds on a virtual machine, more than a change of a timeline costs.
/// A watching consumer takes the value without it. A watch holds the consumer's thread
/// for at most its window, and ends early when the consumer is cancelled. How long each
/// wait lasted is read from the injected clock; the watch itself is bounded by the
/// machine's, since it is the thread's time it spends.
final class LatestValueMailbox<Value: Sendable>: Sendable {
    /// Unchecked: a waiter is stored, and taken out, only under the lock, and whoever
    /// takes it out resumes it (``deliver(_:)``, ``finish(keepingLast:)``); ``next()``
    /// resumes one it did not store. So each is resumed exactly once, and the checked
    /// kind's allocation per wait is spared on every delivery a consumer waits for.
    typealias Waiter = UnsafeContinuation<Value?, Never>

    /// How a consumer's waits for a value went (for tests and diagnostics).
    struct Waits: Equatable {
        /// Waits that parked until a delivery woke them.
        var parked = 0
        /// Watches begun.
        var watched = 0
        /// Watches that caught their value.
        var caught = 0
    }

    private struct State {
        var pending: Value?
        var waiter: Waiter?
        var isFinished = false
        /// When the parked consumer began to wait (set when it parks).
        var waitBegan: ContinuousClock.Instant?
        var watch: ConsumerWatch
        var waits = Waits()
    }

    private let state: PThreadMutex<State>
    /// What the lengths of waits are read from.
    private let clock: any MomentsClock
    /// Rises with every delivery and at the end, under the lock: what a watching
    /// consumer looks at, without the lock.
    private let deliveries = Atomic<UInt64>(0)

    /// How long a consumer watches for its next value: a few of the store's changes,
    /// far less than a thread's time slice.
    static var defaultWatchWindow: Duration { .microseconds(8) }

    /// - Parameters:
    ///   - watchWindow: How long a consumer watches for its next value before it parks;
    ///     zero never watches.
    ///   - clock: What the lengths of the consumer's waits are read from.
    init(watchWindow: Duration = LatestValueMailbox.defaultWatchWindow, clock: any MomentsClock = SystemClock()) {
        state = PThreadMutex(State(watch: ConsumerWatch(window: watchWindow)))
        self.clock = clock
    }

    /// How the consumer's waits went so far.
    var waits: Waits { state.withLock { $0.waits } }

    /// Whether the consumer is parked, waiting for a delivery.
    var hasParkedConsumer: Bool { state.withLock { $0.waiter != nil } }

    /// Hands `value` to the waiting consumer, or keeps it in place of the value still
    /// waiting; nothing once finished.
    func deliver(_ value: Value) {
        let (waiter, replaced) = state.withLock { state -> (Waiter?, Value?) in
            guard !state.isFinished else { return (nil, nil) }
            deliveries.add(1, ordering: .releasing)
            if let waiter = state.waiter {
                state.waiter = nil
                // The clock is read only to wake a parked consumer, which costs far more.
                if let began = state.waitBegan { state.watch.waitEnded(after: clock.now - began) }
                state.waits.parked += 1
                return (waiter, nil)
            }
            defer { state.pending = value }
            return (nil, state.pending)
        }
        waiter?.resume(returning: value)
        // The value replaced is released here, after the lock: its deinit may be long.
        _ = consume replaced
    }

    /// Ends the stream: a waiting consumer gets `nil` now, a busy one at its next call;
    /// a value still waiting is dropped, unless `keepingLast`: then the consumer takes it
    /// first (a waiting consumer has none waiting).
    func finish(keepingLast: Bool = false) {
        let (waiter, dropped) = state.withLock { state -> (Waiter?, Value?) in
            state.isFinished = true
            deliveries.add(1, ordering: .releasing)
            defer {
                state.waiter = nil
                if !keepingLast { state.pending = nil }
            }
            return (state.waiter, keepingLast ? nil : state.pending)
        }
        waiter?.resume(returning: nil)
        _ = consume dropped
    }

    /// The value waiting, or the next one delivered; `nil` once finished or when the
    /// calling task is cancelled (the stream's `onCancel` finishes a waiting one).
    /// One consumer at a time.
    func next() async -> Value? {
        // A value already waiting is taken without a continuation.
        let (ready, watch) = state.withLock { state -> (Value??, (ConsumerWatch, seen: UInt64)?) in
            if let ready = Self.take(from: &state) { return (ready, nil) }
            guard state.watch.beginWait() else { return (nil, nil) }
            state.waits.watched += 1
            return (nil, (state.watch, deliveries.load(ordering: .relaxed)))
        }
        if let ready { return ready }
        let began = clock.now
        let caught = watch.map { watch, seen in
            watch.watch { deliveries.load(ordering: .acquiring) != seen || Task.isCancelled }
        }
        return await withUnsafeContinuation { (continuation: Waiter) in
            let ready = state.withLock { state -> Value?? in
                if let caught { state.watch.watchEnded(caught: caught) }
                if let ready = Self.take(from: &state) {
                    // Caught, or delivered while the consumer was getting ready to park.
                    if caught == true { state.waits.caught += 1 }
                    state.watch.waitEnded(after: caught == true ? .zero : clock.now - began)
                    return ready
                }
                state.waitBegan = began
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The value waiting, `.some(nil)` once finished (or the consumer is cancelled), or
    /// `nil` when the consumer must wait.
    private static func take(from state: inout State) -> Value?? {
        if let value = state.pending {
            state.pending = nil
            return value
        }
        return state.isFinished || Task.isCancelled ? .some(nil) : nil
    }
}
