import Foundation
import MomentsSupport
import MomentsHTTP

/// A call's attempts: one deadline over all of them, retries drawn on the budget, and
/// hedges for slow reads.
extension HTTPClient {
    /// Sends `request` until an answer that needs no retry, within the call's deadline
    /// (`request.timeout`, from now), retrying under the ``RetryPolicy`` while the
    /// ``RetryBudget``, the deadline and the circuit breaker allow.
    nonisolated func exchangeWithRetry(
        _ request: HTTPRequest, context: RequestContext, middlewares: [any HTTPMiddleware], sent: SentRequests, coalesces: Bool,
        hedges: Bool
    ) async throws -> Exchange {
        let startedAt = ContinuousClock.now
        let deadline = startedAt + request.timeout
        origin.beginCall()
        let hedges = hedges && context.allowsRetry
        var attempt = 1
        var waited = Duration.zero
        var retriedStaleConnection = false
        while true {
            let attemptRequest = try attemptRequest(request, deadline: deadline)
            let attemptContext = context.attempt(attempt)
            let delay: Duration
            do {
                let response = try await hedgedAttempt(
                    attemptRequest, context: attemptContext, middlewares: middlewares, sent: sent, coalesces: coalesces, hedges: hedges, deadline: deadline
                )
                guard context.allowsRetry, let policy = configuration.retryPolicy, policy.retryableStatusCodes.contains(response.statusCode) else {
                    return Exchange(response: response, attempts: attempt, startedAt: startedAt)
                }
                switch nextRetry(policy, after: attempt, retryAfter: response.headers["Retry-After"], waited: waited, deadline: deadline) {
                case .retry(let next): delay = next
                case .stop(let reason):
                    return Exchange(response: response, attempts: attempt, startedAt: startedAt, retriesStopped: reason)
                }
            } catch var error as HTTPClientError where error.code == .transportFailure {
                // A kept-alive connection the server had closed fails before any byte
                // of the answer: one more attempt, at once, on a fresh connection. A
                // request the transport could not send whole gets it even when it is
                // not idempotent: the server cannot have acted on it.
                let notSent = error.transportFailure?.kind == .requestNotSent
                if context.allowsRetry || notSent, attempt == 1, !retriedStaleConnection, notSent || Self.isStaleConnection(error),
                   ContinuousClock.now < deadline {
                    retriedStaleConnection = true
                    attempt += 1
                    continue
                }
                guard context.allowsRetry, let policy = configuration.retryPolicy else { throw error }
                switch nextRetry(policy, after: attempt, retryAfter: nil, waited: waited, deadline: deadline) {
                case .retry(let next): delay = next
                case .stop(let reason):
                    error.retriesStopped = reason
                    throw error
                }
            }
            do {
                try Task.checkCancellation()
                try await configuration.retryPolicy?.sleep(delay)
                try Task.checkCancellation()
            } catch {
                throw HTTPClientError.cancelled()
            }
            waited += delay
            attempt += 1
        }
    }

    private enum RetryDecision {
        case retry(Duration)
        case stop(RetryStop)
    }

    /// Whether attempt `attempt + 1` goes, and after how long: the policy's backoff (at
    /// least `Retry-After`), if it ends before the deadline, the breaker is not open,
    /// and the budget has a retry to spend.
    private nonisolated func nextRetry(
        _ policy: RetryPolicy, after attempt: Int, retryAfter: String?, waited: Duration, deadline: ContinuousClock.Instant
    ) -> RetryDecision {
        guard let delay = policy.delay(after: attempt, retryAfter: retryAfter, alreadyWaited: waited) else { return stop(.attemptsExhausted) }
        let now = ContinuousClock.now
        guard now + delay < deadline else { return stop(.deadline) }
        if case .rejected = origin.peek(now: now + delay) { return stop(.circuitOpen) }
        guard origin.withdrawRetry(now: now) else { return stop(.budgetExhausted) }
        instruments.countRetry(stopped: nil)
        return .retry(delay)
    }

    private nonisolated func stop(_ reason: RetryStop) -> RetryDecision {
        instruments.countRetry(stopped: reason)
        return .stop(reason)
    }

    /// `request` for one attempt: its deadline what the call has left (at most the
    /// attempt timeout), and that left time in the deadline header, if one is set.
    nonisolated func attemptRequest(_ request: HTTPRequest, deadline: ContinuousClock.Instant) throws -> HTTPRequest {
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else {
            throw HTTPClientError.transportFailure(TransportFailure(
                kind: .timedOut, message: "the call's deadline of \(Self.milliseconds(request.timeout)) ms passed"
            ))
        }
        var attempt = request
        attempt.timeout = min(remaining, configuration.attemptTimeout ?? remaining)
        if let header = configuration.deadlineHeader { attempt.headers[header] = String(Self.milliseconds(remaining)) }
        return attempt
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        max(0, Int((duration.seconds * 1_000).rounded(.up)))
    }

    /// Whether `error` is what a reused connection closed by the server gives: reset,
    /// or closed with no answer at all.
    static func isStaleConnection(_ error: HTTPClientError) -> Bool {
        guard let failure = error.transportFailure else { return false }
        if failure.kind == .connectionReset { return true }
        return failure.kind == .badResponse && failure.message.lowercased().contains("empty reply")
    }
}
