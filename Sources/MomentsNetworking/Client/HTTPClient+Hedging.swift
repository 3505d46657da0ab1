import Foundation
import MomentsSupport
import MomentsHTTP

/// Hedged reads: a second attempt for a read whose first has not answered after the
/// hedging delay.
extension HTTPClient {
    /// One attempt; for a hedged request, a second one too if the first has not
    /// answered after the hedging delay (and the budget has a retry to spend). The first
    /// good answer wins and the other attempt is cancelled; a failure waits for the
    /// other attempt, if one runs.
    ///
    /// Attempts start at once on the caller's thread (`addImmediateTask`) and report to a
    /// ``HedgeRace``; the delay is an entry on the client's timer, so an attempt that
    /// answers before the delay costs no more than an unhedged one by more than a task.
    nonisolated func hedgedAttempt(
        _ request: HTTPRequest, context: RequestContext, middlewares: [any HTTPMiddleware], sent: SentRequests, coalesces: Bool,
        hedges: Bool, deadline: ContinuousClock.Instant
    ) async throws -> HTTPResponse {
        guard hedges, let delay = origin.hedgeDelay(), ContinuousClock.now + delay < deadline else {
            return try await exchangeOnce(request, context: context, middlewares: middlewares, sent: sent, coalesces: coalesces)
        }
        let failureStatuses = configuration.circuitBreaker?.failureStatusCodes ?? [429, 500, 502, 503, 504]
        let race = HedgeRace()
        let attempt: @Sendable (HTTPRequest, Bool) async -> Void = { request, coalesces in
            do {
                race.post(.answer(try await self.exchangeOnce(request, context: context, middlewares: middlewares, sent: sent, coalesces: coalesces)))
            } catch let error as HTTPClientError {
                race.post(.failed(error))
            } catch {
                race.post(.failed(Task.isCancelled ? .cancelled() : .transportFailure(TransportFailure(kind: .other, message: "\(error)"))))
            }
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addImmediateTask { await attempt(request, coalesces) }
            let timer = hedgeTimer.schedule(after: delay) { race.post(.delayEnded) }
            defer {
                hedgeTimer.cancel(timer)
                group.cancelAll()
            }
            var running = 1
            var held: Result<HTTPResponse, HTTPClientError>?
            while running > 0 {
                switch await race.next() {
                case .delayEnded:
                    guard held == nil, !Task.isCancelled, origin.withdrawRetry() else { continue }
                    // The hedge never joins the first attempt's shared exchange.
                    let hedge = try attemptRequest(request, deadline: deadline)
                    running += 1
                    group.addImmediateTask { await attempt(hedge, false) }
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
}
