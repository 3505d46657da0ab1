
/// Lets concurrent callers asking for the same key share one run of an operation.
///
/// The operation runs in a task of its own. Each caller waits on its own continuation:
/// a caller that is cancelled stops waiting at once, with `CancellationError`, without
/// disturbing the others; the shared run is cancelled only when every caller has gone.
/// A caller arriving after the run ended starts a new one.
package final class SingleFlight<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    private struct Flight {
        var task: Task<Void, Never>?
        var waiters: [Int: Waiter]
        let generation: Int
    }

    private struct State {
        var nextID = 0
        var flights: [Key: Flight] = [:]
    }

    private let state = PThreadMutex(State())

    package init() {}

    /// How many callers are waiting on runs in flight (for tests and diagnostics).
    package var waitingCallers: Int {
        state.withLock { state in state.flights.values.reduce(0) { $0 + $1.waiters.count } }
    }

    /// Runs `operation` for `key`, or joins the run already in flight.
    ///
    /// - Throws: the operation's error, or `CancellationError` if the calling task is
    ///   cancelled before the run ends.
    package func run(
        _ key: Key,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let cancelledEarly = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[id] = continuation
                        return false
                    }
                    let generation = id
                    state.flights[key] = Flight(task: nil, waiters: [id: continuation], generation: generation)
                    state.flights[key]?.task = Task { [weak self] in
                        let result: Result<Value, any Error>
                        do { result = .success(try await operation()) } catch { result = .failure(error) }
                        self?.finish(key, generation: generation, with: result)
                    }
                    return false
                }
                if cancelledEarly { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            leave(key, waiter: id)
        }
    }

    /// Whether a run for `key` is in flight.
    package func isRunning(_ key: Key) -> Bool {
        state.withLock { $0.flights[key] != nil }
    }

    /// The number of runs in flight.
    package var count: Int { state.withLock { $0.flights.count } }

    private func finish(_ key: Key, generation: Int, with result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let flight = state.flights[key], flight.generation == generation else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(_ key: Key, waiter id: Int) {
        let (waiter, abandoned) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard let waiter = state.flights[key]?.waiters.removeValue(forKey: id) else { return (nil, nil) }
            guard state.flights[key]?.waiters.isEmpty == true else { return (waiter, nil) }
            let task = state.flights[key]?.task
            state.flights[key] = nil
            return (waiter, task)
        }
        waiter?.resume(throwing: CancellationError())
        abandoned?.cancel()
    }
}
