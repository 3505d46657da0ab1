import Foundation
import MomentsHTTP

/// Hedged reads: a second attempt for a repeatable request whose ``RequestOptions/hedges``
/// is true and whose first attempt has not answered after the hedging delay of the
/// call's origin (see ``HedgingPolicy``).
///
/// The rules it keeps:
/// - the hedge goes only if it can start before the attempt's deadline, the call was not
///   cancelled, the origin has fewer attempts in flight than
///   ``HedgingPolicy/maximumAttemptsInFlight``, and its retry budget has a retry to
///   spend; it never joins a shared (coalesced) exchange;
/// - the first good answer wins and the other attempt is cancelled; an answer is good
///   unless its status is one of `failureStatuses` (the breaker's failures and the
///   statuses the retry policy retries); a failure waits for the other attempt, if one
///   runs (see ``HedgeRace``);
/// - the delay is a wake-up on the client's clock, cancelled when the attempt ends, and
///   the hedge decision is taken when it ends.
///
/// A call pays for a hedge's task only when a hedge goes: the first attempt runs in the
/// call's own task, and the hedge is a task of its own that the caller's task starts
/// (``CallTask/startHedge(_:)``), so it carries the caller's task-local values. A hedge
/// that wins cancels the call's task, whose only work left is to return its answer.
/// Every hedged call still arms and cancels its delay, keeps the race's state (one
/// allocation, which the delay's action shares), and feeds its latency to the origin's
/// percentile: about 0.8–0.9 µs of CPU per call that answers at once, a tenth of such a
/// call's cost.
struct HedgeStage: CallStage {
    let clock: any MomentsClock
    let failureStatuses: Set<Int>

    /// Keeps to the suspension around `next` only the race, the delay and the first
    /// attempt's outcome: arming the delay happens in a function that is not `async`, so
    /// its values live on the thread's stack, not in the frame the call's task allocates.
    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        guard let (race, timer) = arm(request, call, next) else { return try await next(request, call) }
        let first: HedgeRace.Outcome
        do {
            first = .success(try await next(request, call))
        } catch {
            first = .failure(TransportStage.clientError(error))
        }
        timer.cancel()
        if let decided = race.firstEnded(first) { return try decided.get() }
        return try await race.hedgeOutcome(after: first).get()
    }

    /// The race and its armed delay, or `nil` when this call does not hedge.
    @inline(never)
    private func arm(_ request: HTTPRequest, _ call: Call, _ next: CallPipeline.Next) -> (HedgeRace, ClockWakeUp)? {
        guard call.hedges, call.isRepeatable, let delay = call.origin.hedgeDelay() else { return nil }
        let hedgeAt = clock.now + delay
        guard hedgeAt < call.attemptDeadline else { return nil }
        let race = HedgeRace(failureStatuses: failureStatuses, plan: .init(request: request, call: call, next: next, clock: clock))
        return (race, clock.wake(at: hedgeAt) { race.delayEnded() })
    }
}
