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

    /// An attempt the breaker let go.
    private struct Admission {
        let origin: OriginGuard
        let isProbe: Bool
        let at: ContinuousClock.Instant
    }

    /// Keeps to the suspension around `next` only what the attempt's end needs: the
    /// rest happens in functions that are not `async`, whose values live on the thread's
    /// stack, not in the frame the call's task allocates.
    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        let admission = try admit(call)
        let response: HTTPResponse
        do {
            response = try await next(request, call)
        } catch {
            failed(admission, error)
            throw error
        }
        answered(admission, response)
        return response
    }

    /// The admission of the attempt about to go, or `circuitOpen` from an open breaker.
    @inline(never)
    private func admit(_ call: Call) throws(HTTPClientError) -> Admission {
        let origin = call.hopOrigin
        let admitted = clock.now
        let isProbe: Bool
        switch origin.admit(now: admitted) {
        case .allowed(let probe): isProbe = probe
        case .rejected(let until): throw HTTPClientError.circuitOpen(retryAfter: max(.zero, until - admitted))
        }
        if origin !== call.origin { call.record.answered(from: origin) }
        return Admission(origin: origin, isProbe: isProbe, at: admitted)
    }

    /// Charges the attempt's failure to its origin.
    @inline(never)
    private func failed(_ admission: Admission, _ error: any Error) {
        let failure = error as? HTTPClientError
        let outcome = failure.map { $0.code == .transportFailure ? CircuitBreakerState.Outcome.failure(retryAfter: nil) : .ignored }
        admission.origin.attemptEnded(outcome, isProbe: admission.isProbe, now: clock.now, latency: nil)
        if failure != nil { report(admission.origin) }
    }

    /// Charges the attempt's answer to its origin, and its latency when it succeeded.
    @inline(never)
    private func answered(_ admission: Admission, _ response: HTTPResponse) {
        let now = clock.now
        let succeeded = (200..<300).contains(response.statusCode)
        admission.origin.attemptEnded(outcome(of: response), isProbe: admission.isProbe, now: now, latency: succeeded ? now - admission.at : nil)
        report(admission.origin)
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
