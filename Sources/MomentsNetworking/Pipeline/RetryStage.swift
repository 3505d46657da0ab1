import Foundation
import MomentsSupport
import MomentsHTTP

/// Sends a call's request until an answer that needs no retry, within the call's
/// deadline.
///
/// The rules it keeps:
/// - **A mutation happens at most once unless the caller said otherwise.** A request
///   that is not repeatable (its method is not idempotent and the caller did not set
///   ``RequestOptions/allowsRetry``) is sent again only after a failure that certainly
///   sent nothing (``MomentsHTTP/TransportFailure/mayHaveReachedServer`` is false: no
///   connection, no address, no network, a failed TLS handshake). After any other
///   failure it fails with ``MomentsHTTP/RetryStop/mayHaveBeenProcessed``: the server
///   may have acted on it (RFC 9110 §9.2.2).
/// - **A repeatable request whose kept-alive connection the server had closed** (reset,
///   or closed with no answer) gets one more attempt at once, policy or not.
/// - **Under the ``RetryPolicy``**, failures and the policy's statuses are retried with
///   its backoff (at least `Retry-After`), while the backoff ends before the call's
///   deadline, the breaker of the call's origin would let the retry go, and the retry
///   budget of the origin that failed has a retry to spend.
/// - **One deadline.** No attempt starts after the call's deadline, and each ends by it
///   (or sooner under `attemptTimeout`); backoffs wait on the client's clock. A retry
///   whose wait ends past the deadline (woken late) is not made: the call ends with its
///   last attempt's answer or failure, retries stopped by the deadline
///   (``MomentsHTTP/RetryStop/deadline``), not with a time-out no attempt had.
struct RetryStage: CallStage {
    let policy: RetryPolicy?
    let attemptTimeout: Duration?
    let clock: any MomentsClock
    let instruments: ClientInstruments

    /// The first attempt, which most calls end with; ``retrying(_:_:next:after:)`` takes
    /// over only when its outcome may call for another. Apart, each keeps a small frame
    /// (an async function's frame holds everything any of its paths keeps across a wait,
    /// and a frame that does not fit in what is left of its task allocator's slab costs
    /// a heap allocation).
    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        call.origin.beginCall()
        let now = clock.now
        guard now < call.deadline else { throw Self.deadlinePassed(call, now: now) }
        let first: Result<HTTPResponse, any Error>
        do {
            let response = try await next(request, attemptCall(call, attempt: 1, now: now))
            guard mayRetry(response, of: call) else { return response }
            first = .success(response)
        } catch {
            first = .failure(error)
        }
        return try await retrying(request, call, next: next, after: first)
    }

    /// Whether `response` to `call` may be retried: the call may be sent again and the
    /// policy retries its status.
    private func mayRetry(_ response: HTTPResponse, of call: Call) -> Bool {
        guard call.isRepeatable, let policy else { return false }
        return policy.retryableStatusCodes.contains(response.statusCode)
    }

    /// `call` as attempt `attempt` makes it, starting at `now`.
    private func attemptCall(_ call: Call, attempt: Int, now: ContinuousClock.Instant) -> Call {
        var attemptCall = call
        if attempt > 1 {
            attemptCall.context = call.context.attempt(attempt)
            call.record.attempted(attempt)
        }
        if let attemptTimeout { attemptCall.attemptDeadline = min(call.deadline, now + attemptTimeout) }
        return attemptCall
    }

    /// Decides on the first attempt's outcome, `first`, as on every later one's, and makes
    /// the attempts that follow.
    @inline(never)
    private nonisolated(nonsending) func retrying(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next, after first: Result<HTTPResponse, any Error>) async throws -> HTTPResponse {
        var attempt = 1
        var waited = Duration.zero
        var retriedStaleConnection = false
        // What the attempt before a pending retry got: the call's outcome if the
        // deadline passes before the retry can start.
        var previous: Result<HTTPResponse, HTTPClientError>?
        // The first attempt's outcome, until it is decided on (its deadline was checked
        // before it was made).
        var firstOutcome: Result<HTTPResponse, any Error>? = first
        while true {
            let now = clock.now
            guard firstOutcome != nil || now < call.deadline else {
                // A wait chosen to end before the deadline ended after it (a loaded
                // machine wakes a sleeper late): the call ends as its last attempt did,
                // its retries stopped by the deadline. No attempt timed out.
                switch previous {
                case .success(let response)?:
                    call.record.stopped(.deadline)
                    return response
                case .failure(var error)?:
                    error.retriesStopped = .deadline
                    throw error
                case nil:
                    throw Self.deadlinePassed(call, now: now)
                }
            }
            let delay: Duration
            do {
                let response: HTTPResponse
                if let outcome = firstOutcome {
                    firstOutcome = nil
                    response = try outcome.get()
                } else {
                    response = try await next(request, attemptCall(call, attempt: attempt, now: now))
                }
                guard mayRetry(response, of: call), let policy else { return response }
                switch decide(policy, call, after: attempt, retryAfter: response.headers["Retry-After"], waited: waited) {
                case .retry(let next):
                    delay = next
                    previous = .success(response)
                case .stop(let reason):
                    call.record.stopped(reason)
                    return response
                }
            } catch var error as HTTPClientError where error.code == .transportFailure {
                if !call.isRepeatable, error.mayHaveReachedServer {
                    error.retriesStopped = .mayHaveBeenProcessed
                    instruments.countRetry(stopped: .mayHaveBeenProcessed)
                    throw error
                }
                if call.isRepeatable, attempt == 1, !retriedStaleConnection, Self.isStaleConnection(error), clock.now < call.deadline {
                    retriedStaleConnection = true
                    previous = .failure(error)
                    attempt += 1
                    continue
                }
                guard let policy else { throw error }
                switch decide(policy, call, after: attempt, retryAfter: nil, waited: waited) {
                case .retry(let next):
                    delay = next
                    previous = .failure(error)
                case .stop(let reason):
                    error.retriesStopped = reason
                    throw error
                }
            }
            do {
                try Task.checkCancellation()
                if let sleep = policy?.sleep {
                    try await sleep(delay)
                } else {
                    try await clock.sleep(for: delay)
                }
                try Task.checkCancellation()
            } catch {
                throw HTTPClientError.cancelled()
            }
            waited += delay
            attempt += 1
        }
    }

    private enum Decision {
        case retry(Duration)
        case stop(RetryStop)
    }

    /// Whether attempt `attempt + 1` goes, and after how long: the policy's backoff (at
    /// least `Retry-After`), if it ends before the deadline, the call's origin's breaker
    /// would admit it then, and the failing origin's budget has a retry to spend.
    private func decide(_ policy: RetryPolicy, _ call: Call, after attempt: Int, retryAfter: String?, waited: Duration) -> Decision {
        guard let delay = policy.delay(after: attempt, retryAfter: retryAfter, alreadyWaited: waited, now: clock.date) else {
            return stop(.attemptsExhausted)
        }
        let now = clock.now
        guard now + delay < call.deadline else { return stop(.deadline) }
        if case .rejected = call.origin.peek(now: now + delay) { return stop(.circuitOpen) }
        guard (call.record.lastOrigin ?? call.origin).withdrawRetry(now: now) else { return stop(.budgetExhausted) }
        instruments.countRetry(stopped: nil)
        return .retry(delay)
    }

    private func stop(_ reason: RetryStop) -> Decision {
        instruments.countRetry(stopped: reason)
        return .stop(reason)
    }

    /// The failure of an attempt whose deadline passed before it could be sent: the call's,
    /// or the attempt's own (`attemptTimeout`).
    static func deadlinePassed(_ call: Call, now: ContinuousClock.Instant) -> HTTPClientError {
        let whose = call.attemptDeadline < call.deadline && now < call.deadline
            ? "the attempt's deadline (attemptTimeout) passed"
            : "the call's deadline of \((call.deadline - call.started).milliseconds) ms passed"
        return HTTPClientError.transportFailure(TransportFailure(kind: .timedOut, message: whose))
    }

    /// Whether `error` is what a reused connection closed by the server gives: reset,
    /// or closed with no answer at all.
    static func isStaleConnection(_ error: HTTPClientError) -> Bool {
        guard let failure = error.transportFailure else { return false }
        if failure.kind == .connectionReset { return true }
        return failure.kind == .badResponse && failure.message.lowercased().contains("empty reply")
    }
}
