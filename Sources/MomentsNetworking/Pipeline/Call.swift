import Foundation
import MomentsSupport
import MomentsHTTP

/// One call of ``HTTPClient``, as every stage of its way to the network reads it: who
/// made it, what it may do, and the one deadline that bounds all of it.
///
/// A call is a value: a stage that changes it for what lies below (the retry stage
/// numbers each attempt, the redirect stage names the origin of each hop) passes the
/// changed copy to `next`. What the stages learn on the way and the call needs at the
/// end (the credentials sent, the identity of the last request, the origin that
/// answered) is kept in its ``CallRecord``.
struct Call: Sendable {
    /// What middlewares know: the request's name, the attempt, its priority.
    var context: RequestContext
    /// When the call began, on the client's clock.
    let started: ContinuousClock.Instant
    /// The call's deadline: every wait for a slot, attempt, backoff, hedge and redirect
    /// hop ends by then.
    let deadline: ContinuousClock.Instant
    /// The deadline of the attempt under way: the call's, or sooner under the client's
    /// `attemptTimeout`.
    var attemptDeadline: ContinuousClock.Instant
    /// Whether the request may reach the server more than once (an idempotent method,
    /// or declared so): only then is it sent again after it may have been received.
    let isRepeatable: Bool
    /// Whether a slow attempt may be hedged.
    let hedges: Bool
    /// Whether identical requests in flight may share this one's exchange.
    var coalesces: Bool
    /// The request's own middlewares, run after the client's.
    let middlewares: [any HTTPMiddleware]
    /// The origin the call was made to: its retries and hedges draw on this origin's
    /// budget, and its breaker decides whether a retry may go.
    let origin: OriginGuard
    /// The origin of the hop under way (another one after a redirect elsewhere).
    var hopOrigin: OriginGuard
    /// What the stages learn on the way.
    let record: CallRecord
    /// The task the call's stages run in, and its hedges.
    let task = CallTask()

    init(
        context: RequestContext, started: ContinuousClock.Instant, deadline: ContinuousClock.Instant,
        isRepeatable: Bool, hedges: Bool, coalesces: Bool, middlewares: [any HTTPMiddleware], origin: OriginGuard,
        record: CallRecord
    ) {
        self.context = context
        self.started = started
        self.deadline = deadline
        self.attemptDeadline = deadline
        self.isRepeatable = isRepeatable
        self.hedges = hedges
        self.coalesces = coalesces
        self.middlewares = middlewares
        self.origin = origin
        self.hopOrigin = origin
        self.record = record
    }
}

/// What one call's stages learn as its requests go: the credential values sent (to
/// redact), the identity of the last request sent (to cache its answer under), and
/// the origin that answered last (to charge a failure to).
///
/// A value whose copies share one record: one allocation, the lock and its state.
struct CallRecord: Sendable {
    /// Whether the identity of what is sent is needed (to key a cached answer); the
    /// digest is not computed otherwise.
    let keepsIdentity: Bool
    private struct State {
        var secrets = SentSecrets()
        var identity: RequestIdentity?
        var lastOrigin: OriginGuard?
        var attempts = 1
        var retriesStopped: RetryStop?
    }
    private let state = PThreadMutex(State())

    init(keepsIdentity: Bool) {
        self.keepsIdentity = keepsIdentity
    }

    /// The credential values sent so far (read once the call has ended, all of them).
    var secrets: SentSecrets { state.withLock { $0.secrets } }

    /// Notes the credential values of `headers`, about to be sent.
    func collectSecrets(from headers: HTTPHeaders, names: IdentityHeaderNames) {
        let found = SentSecrets.values(in: headers, names: names)
        guard !found.isEmpty else { return }
        state.withLock { $0.secrets.add(found) }
    }

    /// The identity of the last request sent.
    var lastIdentity: RequestIdentity? { state.withLock { $0.identity } }

    func record(_ identity: RequestIdentity) {
        state.withLock { $0.identity = identity }
    }

    /// The origin other than the call's own whose answer (or failure) came last, after a
    /// redirect elsewhere; `nil` while every answer came from the call's own origin.
    var lastOrigin: OriginGuard? { state.withLock { $0.lastOrigin } }

    func answered(from origin: OriginGuard) {
        state.withLock { $0.lastOrigin = origin }
    }

    /// Attempts made so far, the first included (1 until a second one is made).
    var attempts: Int { state.withLock { $0.attempts } }

    func attempted(_ attempt: Int) {
        state.withLock { $0.attempts = max($0.attempts, attempt) }
    }

    /// Why a failure that could have been retried was not.
    var retriesStopped: RetryStop? { state.withLock { $0.retriesStopped } }

    func stopped(_ reason: RetryStop) {
        state.withLock { $0.retriesStopped = reason }
    }
}
