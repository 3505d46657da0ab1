import MomentsSupport
import MomentsHTTP

/// One hedged attempt: the first attempt, which runs in the call's own task, against
/// the hedge the hedging delay may start in a task of its own. It decides which outcome
/// the call gets, and which attempt to cancel.
///
/// - The first good answer wins (an answer is good when its status is not one the
///   client counts as a failure); the other attempt is cancelled.
/// - A failure waits for the other attempt, if one was started; when both fail, the
///   failure that came first is the call's.
///
/// A value whose copies share one race: one allocation, the lock and its state, which
/// also holds what the hedge needs to start. The hedging delay's action captures the
/// race alone (``delayEnded()``), so arming the delay allocates nothing more.
struct HedgeRace: Sendable {
    typealias Outcome = Result<HTTPResponse, HTTPClientError>

    /// What a hedge needs to start: the request, the call, the rest of the pipeline, and
    /// the clock its rules are checked on.
    struct Plan: Sendable {
        let request: HTTPRequest
        let call: Call
        let next: CallPipeline.Next
        let clock: any MomentsClock
    }

    private enum Phase {
        /// The first attempt is under way.
        case first
        /// The first attempt failed; the call waits for the hedge.
        case waiting(CheckedContinuation<Outcome, Never>)
        /// The hedge answered well while the first attempt was under way.
        case hedgeWon(HTTPResponse)
        /// Decided.
        case closed
    }

    private struct State {
        var phase = Phase.first
        var hedgeRequested = false
        /// The hedge's failure, while the first attempt is under way.
        var hedgeFailure: Outcome?
        var hedge: Task<Void, Never>?
        let failureStatuses: Set<Int>
        let plan: Plan

        /// Whether the first attempt is under way with no hedge requested.
        var mayHedge: Bool {
            guard case .first = phase else { return false }
            return !hedgeRequested
        }

        func isGood(_ response: HTTPResponse) -> Bool {
            !failureStatuses.contains(response.statusCode)
        }
    }

    private let state: PThreadMutex<State>

    init(failureStatuses: Set<Int>, plan: consuming Plan) {
        state = PThreadMutex(State(failureStatuses: failureStatuses, plan: consume plan))
    }

    /// The hedging delay ended: starts the hedge if the rules let it go (see
    /// ``HedgeStage``).
    func delayEnded() {
        guard let plan = state.withLock({ $0.mayHedge ? $0.plan : nil }) else { return }
        let call = plan.call, now = plan.clock.now
        guard !call.task.isCancelled, now < call.attemptDeadline, call.origin.admitsHedge(),
              call.origin.withdrawRetry(now: now), requestHedge() else { return }
        var hedge = call
        hedge.coalesces = false
        call.task.startHedge { [self, hedge] in
            let task = Task.immediate {
                guard isOpen else { return }
                let outcome: Outcome
                do {
                    outcome = .success(try await plan.next(plan.request, hedge))
                } catch {
                    outcome = .failure(TransportStage.clientError(error))
                }
                if hedgeEnded(outcome) { hedge.task.cancelCallTask() }
            }
            adopt(task)
            return task
        }
    }

    /// Whether the race is undecided: a hedge started now still has a use.
    private var isOpen: Bool {
        state.withLock { state in
            switch state.phase {
            case .first, .waiting: true
            case .hedgeWon, .closed: false
            }
        }
    }

    /// Records that a hedge goes; `false` if the first attempt already ended.
    private func requestHedge() -> Bool {
        state.withLock { state in
            guard state.mayHedge else { return false }
            state.hedgeRequested = true
            return true
        }
    }

    /// The hedge's task, cancelled at once if the race is already decided.
    private func adopt(_ hedge: Task<Void, Never>) {
        let decided = state.withLock { state -> Bool in
            state.hedge = hedge
            if case .closed = state.phase { return true }
            return false
        }
        if decided { hedge.cancel() }
    }

    /// Records the hedge's outcome; returns whether the first attempt is to be cancelled
    /// (the hedge answered well first).
    private func hedgeEnded(_ outcome: Outcome) -> Bool {
        let (waiter, cancelsFirst) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Bool) in
            switch state.phase {
            case .first:
                if case .success(let response) = outcome, state.isGood(response) {
                    state.phase = .hedgeWon(response)
                    return (nil, true)
                }
                state.hedgeFailure = state.hedgeFailure ?? outcome
                return (nil, false)
            case .waiting(let waiter):
                state.phase = .closed
                return (waiter, false)
            case .hedgeWon, .closed:
                return (nil, false)
            }
        }
        waiter?.resume(returning: outcome)
        return cancelsFirst
    }

    /// The call's outcome, given the first attempt's, when it is decided now; `nil` when
    /// the first attempt failed while a hedge was under way, and the call waits for it
    /// (``hedgeOutcome(after:)``).
    ///
    /// Not `async`: a call answered before its hedge goes, nearly every call, never
    /// allocates the waiting function's frame (with its outcomes, some 3 KB), which its
    /// task's allocator would take from the heap.
    func firstEnded(_ first: Outcome) -> Outcome? {
        let (outcome, hedge) = state.withLock { state -> (Outcome?, Task<Void, Never>?) in
            switch state.phase {
            case .hedgeWon(let response):
                state.phase = .closed
                return (.success(response), nil)
            case .first:
                if case .success(let response) = first, state.isGood(response) {
                    state.phase = .closed
                    return (first, state.hedge)
                }
                if let failure = state.hedgeFailure {
                    state.phase = .closed
                    return (failure, nil)
                }
                guard state.hedgeRequested else {
                    state.phase = .closed
                    return (first, nil)
                }
                return (nil, nil)
            case .waiting, .closed:
                // The first attempt ends once; nothing else closes the race before it.
                return (first, nil)
            }
        }
        hedge?.cancel()
        return outcome
    }

    /// The call's outcome once the hedge ends, after ``firstEnded(_:)`` found the first
    /// attempt failed while the hedge was under way: the hedge's good answer, or else
    /// the first attempt's failure.
    nonisolated(nonsending) func hedgeOutcome(after first: Outcome) async -> Outcome {
        let hedge = await withCheckedContinuation { continuation in
            let ended = state.withLock { state -> Outcome? in
                switch state.phase {
                case .first:
                    if let failure = state.hedgeFailure {
                        state.phase = .closed
                        return failure
                    }
                    state.phase = .waiting(continuation)
                    return nil
                case .hedgeWon(let response):
                    state.phase = .closed
                    return .success(response)
                case .waiting, .closed:
                    return first
                }
            }
            if let ended { continuation.resume(returning: ended) }
        }
        if case .success(let response) = hedge, state.withLock({ $0.isGood(response) }) { return hedge }
        return first
    }
}
