import Foundation
import MomentsHTTP

/// The circuit breaker of the origin each request actually goes to, consulted when it
/// goes (after waiting for a slot, so callers queued behind a failing origin do not all
/// reach it once its breaker has opened): an open breaker fails the request at once with
/// `circuitOpen`, and its outcome (a failure status, a transport failure, or success) is
/// charged to that origin alone. A success's latency feeds that origin's hedging delay,
/// and the attempts it counts in flight decide whether that origin admits a hedge.
struct BreakerStage: CallStage {
    let clock: any MomentsClock
    let instruments: ClientInstruments
    let origins: OriginGuards

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        let origin = call.hopOrigin
        let admitted = clock.now
        let isProbe: Bool
        switch origin.admit(now: admitted) {
        case .allowed(let probe): isProbe = probe
        case .rejected(let until): throw HTTPClientError.circuitOpen(retryAfter: max(.zero, until - admitted))
        }
        if origin !== call.origin { call.record.answered(from: origin) }
        let response: HTTPResponse
        do {
            response = try await next(request, call)
        } catch {
            let failure = error as? HTTPClientError
            let outcome = failure.map { $0.code == .transportFailure ? CircuitBreakerState.Outcome.failure(retryAfter: nil) : .ignored }
            origin.attemptEnded(outcome, isProbe: isProbe, now: clock.now, latency: nil)
            if failure != nil { report(origin) }
            throw error
        }
        let now = clock.now
        let succeeded = (200..<300).contains(response.statusCode)
        origin.attemptEnded(outcome(of: response), isProbe: isProbe, now: now, latency: succeeded ? now - admitted : nil)
        report(origin)
        return response
    }

    /// How the breaker counts `response`.
    private func outcome(of response: HTTPResponse) -> CircuitBreakerState.Outcome {
        guard let policy = origins.base.breakerPolicy, policy.failureStatusCodes.contains(response.statusCode) else { return .success }
        return .failure(retryAfter: response.headers["Retry-After"].flatMap { RetryAfter.parse($0, now: clock.date) })
    }

    /// The breaker gauge follows the client's own origin.
    private func report(_ origin: OriginGuard) {
        if instruments.reportsBreaker, origin === origins.base { instruments.setBreaker(origin.breakerPhase) }
    }
}
