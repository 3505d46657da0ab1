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
/// A value whose copies share one race: one allocation, the lock and its state.
struct HedgeRace: Sendable {
    typealias Outcome = Result<HTTPResponse, HTTPClientError>

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
    }

    private let state = PThreadMutex(State())
    private let failureStatuses: Set<Int>

    init(failureStatuses: Set<Int>) {
        self.failureStatuses = failureStatuses
    }

    /// Whether the first attempt is under way with no hedge requested.
    var mayHedge: Bool {
        state.withLock { state in
            guard case .first = state.phase else { return false }
            return !state.hedgeRequested
        }
    }

    /// Whether the race is undecided: a hedge started now still has a use.
    var isOpen: Bool {
        state.withLock { state in
            switch state.phase {
            case .first, .waiting: true
            case .hedgeWon, .closed: false
            }
        }
    }

    /// Records that a hedge goes; `false` if the first attempt already ended.
    func requestHedge() -> Bool {
        state.withLock { state in
            guard case .first = state.phase, !state.hedgeRequested else { return false }
            state.hedgeRequested = true
            return true
        }
    }

    /// The hedge's task, cancelled at once if the race is already decided.
    func adopt(_ hedge: Task<Void, Never>) {
        let decided = state.withLock { state -> Bool in
            state.hedge = hedge
            if case .closed = state.phase { return true }
            return false
        }
        if decided { hedge.cancel() }
    }

    /// Records the hedge's outcome; returns whether the first attempt is to be cancelled
    /// (the hedge answered well first).
    func hedgeEnded(_ outcome: Outcome) -> Bool {
        let (waiter, cancelsFirst) = state.withLock { state -> (CheckedContinuation<Outcome, Never>?, Bool) in
            switch state.phase {
            case .first:
                if case .success(let response) = outcome, isGood(response) {
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
                if case .success(let response) = first, isGood(response) {
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
        if case .success(let response) = hedge, isGood(response) { return hedge }
        return first
    }

    private func isGood(_ response: HTTPResponse) -> Bool {
        !failureStatuses.contains(response.statusCode)
    }
}
