import MomentsSupport

/// Lets concurrent callers asking for the same key share one call of an operation,
/// without a task of its own: the first caller runs it, the others wait for its result.
///
/// A waiting caller that is cancelled stops waiting at once, with `CancellationError`.
/// If the caller running the operation is cancelled, the operation is cancelled with it
/// and one of the callers still waiting runs it again, so no caller is failed by another
/// one's cancellation, and nothing runs once every caller has gone. A caller arriving
/// after the call ended starts a new one.
///
/// Compared with `SingleFlight`, it saves a task per call; use it where running the
/// operation again after a cancellation is harmless (a read).
final class SharedCall<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    /// The runner was cancelled: run the operation again.
    private struct HandOver: Error {}

    private struct Call {
        var callers = 0
        var waiters: [Int: Waiter] = [:]

        /// Counts a caller in; whether it is the first.
        mutating func join() -> Bool {
            callers += 1
            return callers == 1
        }
    }

    private struct State {
        var nextID = 0
        var calls: [Key: Call] = [:]
    }

    private let state = PThreadMutex(State())

    init() {}

    /// Runs `operation` for `key`, or waits for the call already running.
    ///
    /// - Throws: the operation's error, or `CancellationError` if the calling task is
    ///   cancelled before the call ends.
    nonisolated(nonsending) func run(_ key: Key, operation: nonisolated(nonsending) () async throws -> Value) async throws -> Value {
        while true {
            // One lookup: the entry is made by the first caller, who runs the operation.
            let isRunner = state.withLock { $0.calls[key, default: Call()].join() }
            if isRunner {
                let result: Result<Value, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                let cancelled = Task.isCancelled
                let waiters = state.withLock { $0.calls.removeValue(forKey: key)?.waiters.values.map { $0 } ?? [] }
                for waiter in waiters {
                    if cancelled { waiter.resume(throwing: HandOver()) } else { waiter.resume(with: result) }
                }
                return try result.get()
            }
            do {
                return try await wait(for: key)
            } catch is HandOver {
                if Task.isCancelled { throw CancellationError() }
                continue
            }
        }
    }

    private nonisolated(nonsending) func wait(for key: Key) async throws -> Value {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let outcome = state.withLock { state -> (any Error)? in
                    if Task.isCancelled { return CancellationError() }
                    guard state.calls[key] != nil else { return HandOver() }
                    state.calls[key]?.waiters[id] = continuation
                    return nil
                }
                if let outcome { continuation.resume(throwing: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.calls[key]?.waiters.removeValue(forKey: id) }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// The number of calls running.
    var count: Int { state.withLock { $0.calls.count } }
}
