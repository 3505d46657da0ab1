import Foundation
import MomentsHTTP

/// Hedged reads: a second attempt for a repeatable request whose ``RequestOptions/hedges``
/// is true and whose first attempt has not answered after the hedging delay of the
/// call's origin (see ``HedgingPolicy``).
///
/// The rules it keeps:
/// - the hedge goes only if it can start before the attempt's deadline, the origin has
///   fewer attempts in flight than ``HedgingPolicy/maximumAttemptsInFlight``, and its
///   retry budget has a retry to spend; it never joins a shared (coalesced) exchange;
/// - the first good answer wins and the other attempt is cancelled; a failure (or a
///   status the breaker counts as failure) waits for the other attempt, if one runs;
/// - the delay is a wake-up on the client's clock, cancelled when the attempt ends.
struct HedgeStage: CallStage {
    let clock: any MomentsClock
    let failureStatuses: Set<Int>

    func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        guard call.hedges, call.isRepeatable, let delay = call.origin.hedgeDelay(), clock.now + delay < call.attemptDeadline else {
            return try await next(request, call)
        }
        let race = HedgeRace()
        let attempt: @Sendable (Call) async -> Void = { call in
            do {
                race.post(.answer(try await next(request, call)))
            } catch let error as HTTPClientError {
                race.post(.failed(error))
            } catch {
                race.post(.failed(Task.isCancelled ? .cancelled() : .transportFailure(TransportFailure(kind: .other, message: "\(error)"))))
            }
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addImmediateTask { await attempt(call) }
            if let ended = race.takeIfPosted() {
                // The attempt ended before it ever waited (an answer from memory): there is
                // nothing to hedge, and no wake-up to set.
                if Task.isCancelled { throw HTTPClientError.cancelled() }
                switch ended {
                case .answer(let response): return response
                case .failed(let error): throw error
                case .delayEnded: break
                }
            }
            let timer = clock.wake(at: clock.now + delay) { race.post(.delayEnded) }
            defer {
                timer.cancel()
                group.cancelAll()
            }
            var running = 1
            var held: Result<HTTPResponse, HTTPClientError>?
            while running > 0 {
                switch await race.next() {
                case .delayEnded:
                    guard held == nil, !Task.isCancelled, clock.now < call.attemptDeadline, call.origin.admitsHedge(),
                          call.origin.withdrawRetry(now: clock.now) else { continue }
                    running += 1
                    Self.startHedge(of: call, in: &group, attempt)
                case .answer(let response) where !failureStatuses.contains(response.statusCode):
                    return response
                case .answer(let response):
                    running -= 1
                    held = held ?? .success(response)
                case .failed(let error):
                    running -= 1
                    held = held ?? .failure(error)
                }
            }
            if Task.isCancelled { throw HTTPClientError.cancelled() }
            guard let held else { throw HTTPClientError.cancelled() }
            return try held.get()
        }
    }

    /// Starts the hedge: `call` again, never shared. Apart from ``send(_:_:next:)``, so
    /// the copy of the call it makes is not kept in the frame that waits for the race.
    @inline(never)
    private static func startHedge(of call: Call, in group: inout ThrowingTaskGroup<Void, any Error>, _ attempt: @escaping @Sendable (Call) async -> Void) {
        var hedge = call
        hedge.coalesces = false
        group.addImmediateTask { await attempt(hedge) }
    }
}
