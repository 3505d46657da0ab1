import MomentsSupport
import MomentsHTTP

/// The task one call's stages run in, and the hedges its attempts start.
///
/// The rules it keeps:
/// - **The call can be cancelled without cancelling its caller.** The stages run in a
///   task of their own, started at once on the caller's thread (`Task.immediate`): an
///   answer that needs no waiting completes before the caller would suspend.
///   ``cancel()`` (``HTTPClient/cancelAll()``, a later latest-wins call, the caller's
///   own cancellation) cancels that task and every hedge, never the caller's task.
/// - **A hedge runs with what its caller's task carries.** ``startHedge(_:)`` hands the
///   hedge to the caller's task, which starts it: the hedge inherits the caller's task
///   priority and task-local values (trace context, progress reporting), as the first
///   attempt does, whatever thread the hedging delay ended on.
/// - **A call that ended leaves no task behind.** ``run(_:)`` returns only once the
///   call's task and every hedge it started have ended.
final class CallTask: Sendable {
    /// Starts a hedge in the calling task and returns it.
    typealias HedgeStart = @Sendable () -> Task<Void, Never>

    private struct State {
        var task: Task<Void, Never>?
        var isCancelled = false
        /// Hedges handed over, not yet started by the caller's task.
        var handedOver: [HedgeStart] = []
        /// Hedges started and not yet awaited.
        var hedges: [Task<Void, Never>] = []
        /// What the call's task ended with.
        var outcome: Result<HTTPResponse, any Error>?
        /// The caller's task, waiting for a hedge to start or for the call to end.
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = PThreadMutex(State())

    init() {}

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Runs `operation` in the call's task and returns what it returns, once that task
    /// and every hedge it started have ended. One run at a time; a later run forgets the
    /// outcome of the one before (a cancellation stays).
    nonisolated(nonsending) func run(_ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> HTTPResponse) async throws -> HTTPResponse {
        state.withLock { $0.outcome = nil }
        let task = Task.immediate { [self] in
            let outcome: Result<HTTPResponse, any Error>
            do {
                outcome = .success(try await operation())
            } catch {
                outcome = .failure(error)
            }
            ended(with: outcome)
        }
        if state.withLock({ state -> Bool in
            state.task = task
            return state.isCancelled
        }) {
            task.cancel()
        }
        return try await withTaskCancellationHandler {
            try await hostUntilEnded()
        } onCancel: {
            cancel()
        }
    }

    /// Cancels the call's task and every hedge it started; a hedge started later starts
    /// cancelled.
    func cancel() {
        let (task, hedges) = state.withLock { state -> (Task<Void, Never>?, [Task<Void, Never>]) in
            state.isCancelled = true
            return (state.task, state.hedges)
        }
        task?.cancel()
        for hedge in hedges { hedge.cancel() }
    }

    /// Cancels the call's task alone (its first attempt lost to a hedge).
    func cancelCallTask() {
        state.withLock { $0.task }?.cancel()
    }

    /// Hands `start` to the caller's task, which calls it and waits for the task it
    /// returns before the call ends. Any thread may call it.
    func startHedge(_ start: @escaping HedgeStart) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.handedOver.append(start)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func ended(with outcome: Result<HTTPResponse, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.outcome = outcome
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// What the caller's task does while the call runs: starts the hedges handed over,
    /// and, once the call's task ended, waits for them.
    private nonisolated(nonsending) func hostUntilEnded() async throws -> HTTPResponse {
        while true {
            // One lock per turn: what was handed over, and, once the call's task ended with
            // nothing left to start, the outcome and the hedges to wait for.
            let (starts, ended) = state.withLock { state -> ([HedgeStart], (Result<HTTPResponse, any Error>, [Task<Void, Never>])?) in
                let starts = state.handedOver
                state.handedOver.removeAll()
                guard starts.isEmpty, let outcome = state.outcome else { return (starts, nil) }
                defer { state.hedges.removeAll() }
                return (starts, (outcome, state.hedges))
            }
            if case let (outcome, hedges)? = ended {
                for hedge in hedges { await hedge.value }
                return try outcome.get()
            }
            for start in starts {
                let hedge = start()
                let cancelled = state.withLock { state -> Bool in
                    state.hedges.append(hedge)
                    return state.isCancelled
                }
                if cancelled { hedge.cancel() }
            }
            guard starts.isEmpty else { continue }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    guard case .none = state.outcome, state.handedOver.isEmpty else { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
