import MomentsSupport

/// One subscriber's newest value not yet taken: the state stream of
/// `MomentsStore.updates(for:)`, where a slow consumer gets the newest value and never a
/// backlog.
///
/// A value delivered while the consumer waits is handed to it; one delivered while it
/// is busy replaces the value still waiting, if any. It does the work of an
/// `AsyncStream` buffering the newest element with a lock and one optional, without a
/// queue: the store delivers a snapshot on every change, to every subscriber.
final class LatestValueMailbox<Value: Sendable>: Sendable {
    /// Unchecked: a waiter is stored, and taken out, only under the lock, and whoever
    /// takes it out resumes it (``deliver(_:)``, ``finish(keepingLast:)``); ``next()``
    /// resumes one it did not store. So each is resumed exactly once, and the checked
    /// kind's allocation per wait is spared on every delivery a consumer waits for.
    typealias Waiter = UnsafeContinuation<Value?, Never>

    private struct State {
        var pending: Value?
        var waiter: Waiter?
        var isFinished = false
    }

    private let state = PThreadMutex(State())

    init() {}

    /// Hands `value` to the waiting consumer, or keeps it in place of the value still
    /// waiting; nothing once finished.
    func deliver(_ value: Value) {
        let (waiter, replaced) = state.withLock { state -> (Waiter?, Value?) in
            guard !state.isFinished else { return (nil, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
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
    func next() async -> Value? {
        // A value already waiting is taken without a continuation.
        if let ready = state.withLock(Self.take) { return ready }
        return await withUnsafeContinuation { (continuation: Waiter) in
            let ready = state.withLock { state -> Value?? in
                if let ready = Self.take(from: &state) { return ready }
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
