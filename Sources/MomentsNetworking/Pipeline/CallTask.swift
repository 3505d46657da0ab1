import MomentsSupport
import MomentsHTTP

/// The task one call's stages run in, and the hedges its attempts start.
///
/// The rules it keeps:
/// - **The call can be cancelled without cancelling its caller.** The stages run in a
///   task of their own, the one child of a task group the caller's task hosts, started
///   at once on the caller's thread (`addImmediateTask`): an answer that needs no
///   waiting completes before the caller would suspend. ``cancel()``
///   (``HTTPClient/cancelAll()``, a later latest-wins call, the caller's own
///   cancellation) cancels that task and every hedge, never the caller's task; the
///   caller's task, woken for it, cancels the group.
/// - **A hedge runs with what its caller's task carries.** ``startHedge(_:)`` hands the
///   hedge to the caller's task, which starts it: the hedge inherits the caller's task
///   priority and task-local values (trace context, progress reporting), as the first
///   attempt does, whatever thread the hedging delay ended on.
/// - **A call that ended leaves no task behind.** ``run(_:)`` returns only once the
///   call's task and every hedge it started have ended.
///
/// A value whose copies share one state: one allocation, the lock and what it guards.
struct CallTask: Sendable {
    /// Starts a hedge in the calling task and returns it.
    typealias HedgeStart = @Sendable () -> Task<Void, Never>

    private struct State {
        var isCancelled = false
        /// Whether the call's task is to be cancelled: the caller's task, which hosts it,
        /// has not yet done so.
        var cancelsCallTask = false
        /// Hedges handed over, not yet started by the caller's task.
        var handedOver: [HedgeStart] = []
        /// Hedges started and not yet awaited.
        var hedges: [Task<Void, Never>] = []
        /// What the call's task ended with.
        var outcome: Result<HTTPResponse, any Error>?
        /// The caller's task, waiting for something to do or for the call to end.
        var waiter: UnsafeContinuation<Void, Never>?

        /// Takes the waiter out, to be resumed outside the lock.
        mutating func wake() -> UnsafeContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    private let state = PThreadMutex(State())

    init() {}

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Whether the caller's task is parked, waiting for the call (for tests).
    var hasParkedHost: Bool { state.withLock { $0.waiter != nil } }

    /// Runs `operation` in the call's task and returns what it returns, once that task
    /// and every hedge it started have ended. One run at a time; a later run forgets the
    /// outcome of the one before (a cancellation stays).
    ///
    /// The call's task is a child of a group rather than an unstructured task: a task
    /// made with `Task.immediate` carries an executor-preference record even when it has
    /// no preference, and every switch of executor in it then looks the preference up
    /// under the task's lock.
    ///
    /// The caller's own cancellation reaches the call's task as it reaches any child; it
    /// is passed on to hedges, which are tasks of their own, by ``cancel()``, through a
    /// cancellation handler the caller's task holds only while hedges run.
    nonisolated(nonsending) func run(_ operation: nonisolated(nonsending) @escaping @Sendable () async throws -> HTTPResponse) async throws -> HTTPResponse {
        let cancelled = state.withLock { state -> Bool in
            state.outcome = nil
            state.cancelsCallTask = false
            return state.isCancelled
        }
        return try await withDiscardingTaskGroup(returning: Result<HTTPResponse, any Error>.self) { group in
            if cancelled { group.cancelAll() }
            group.addImmediateTask { [self] in
                let outcome: Result<HTTPResponse, any Error>
                do {
                    outcome = .success(try await operation())
                } catch {
                    outcome = .failure(error)
                }
                ended(with: outcome)
            }
            return await hostUntilEnded(&group)
        }.get()
    }

    /// Cancels the call's task and every hedge it started; a hedge started later starts
    /// cancelled. Only the first call does anything: the caller's task, woken by it,
    /// cancels the call's task once, and a later call would only wake it again.
    func cancel() {
        let (waiter, hedges) = state.withLock { state -> (UnsafeContinuation<Void, Never>?, [Task<Void, Never>]) in
            guard !state.isCancelled else { return (nil, []) }
            state.isCancelled = true
            state.cancelsCallTask = true
            return (state.wake(), state.hedges)
        }
        waiter?.resume()
        for hedge in hedges { hedge.cancel() }
    }

    /// Cancels the call's task alone (its first attempt lost to a hedge).
    func cancelCallTask() {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.cancelsCallTask = true
            return state.wake()
        }
        waiter?.resume()
    }

    /// Hands `start` to the caller's task, which calls it and waits for the task it
    /// returns before the call ends. Any thread may call it.
    func startHedge(_ start: @escaping HedgeStart) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.handedOver.append(start)
            return state.wake()
        }
        waiter?.resume()
    }

    private func ended(with outcome: Result<HTTPResponse, any Error>) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            state.outcome = outcome
            return state.wake()
        }
        waiter?.resume()
    }

    /// What the caller's task does while the call runs: starts the hedges handed over,
    /// cancels the call's task when asked to, and, once the call's task ended, waits for
    /// the hedges and returns what the call's task ended with.
    ///
    /// The waiter is stored and taken out only under the lock, and whoever takes it out
    /// resumes it, once: so an unsafe continuation is enough.
    private nonisolated(nonsending) func hostUntilEnded(_ group: inout DiscardingTaskGroup, hedgesRun: Bool = false) async -> Result<HTTPResponse, any Error> {
        while true {
            // One lock per turn: what was handed over, whether to cancel the call's task,
            // and, once that task ended with nothing left to start, the outcome and the
            // hedges to wait for.
            let (starts, cancels, ended) = state.withLock { state -> ([HedgeStart], Bool, (Result<HTTPResponse, any Error>, [Task<Void, Never>])?) in
                let starts = state.handedOver
                state.handedOver.removeAll()
                let cancels = state.cancelsCallTask
                state.cancelsCallTask = false
                guard starts.isEmpty, let outcome = state.outcome else { return (starts, cancels, nil) }
                defer { state.hedges.removeAll() }
                return (starts, cancels, (outcome, state.hedges))
            }
            if cancels { group.cancelAll() }
            if case let (outcome, hedges)? = ended {
                for hedge in hedges { await hedge.value }
                return outcome
            }
            for start in starts {
                let hedge = start()
                let cancelled = state.withLock { state -> Bool in
                    state.hedges.append(hedge)
                    return state.isCancelled
                }
                if cancelled || Task.isCancelled { hedge.cancel() }
            }
            if !starts.isEmpty, !hedgesRun {
                // From the first hedge on, the caller's own cancellation must reach the
                // hedges, tasks of their own: the rest of the call is hosted under one
                // handler that passes it on (``cancel()``). Without hedges nothing needs
                // it: the call's task is cancelled with its caller, as a child is.
                return await withTaskCancellationHandler {
                    await hostUntilEnded(&group, hedgesRun: true)
                } onCancel: {
                    cancel()
                }
            }
            guard starts.isEmpty, !cancels else { continue }
            await withUnsafeContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    guard case .none = state.outcome, state.handedOver.isEmpty, !state.cancelsCallTask else { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
