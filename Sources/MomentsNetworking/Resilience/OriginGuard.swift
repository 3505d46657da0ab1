import MomentsSupport

/// The state a client keeps about one origin it talks to: its circuit breaker, retry
/// budget and recent latency, behind one lock.
///
/// A lock and not the client's actor: every attempt takes it twice (when it goes, when
/// it ends), and an actor hop per attempt would cost each request a context switch for
/// a few dozen nanoseconds of work. The state machines it holds
/// (``CircuitBreakerState``, ``RetryBudgetState``, ``LatencyTracker``) are pure values:
/// the decisions are theirs, the lock only orders them.
final class OriginGuard: Sendable {
    private struct State {
        var breaker: CircuitBreakerState?
        var budget: RetryBudgetState?
        var latency = LatencyTracker()
        /// Attempts sent to the origin and not ended, counted only where hedging is on.
        var attemptsInFlight = 0
    }

    private let state: PThreadMutex<State>
    private let hedging: HedgingPolicy?
    let breakerPolicy: CircuitBreakerPolicy?

    init(breaker: CircuitBreakerPolicy?, budget: RetryBudget?, hedging: HedgingPolicy?, now: ContinuousClock.Instant) {
        state = PThreadMutex(State(breaker: breaker.map(CircuitBreakerState.init), budget: budget.map { RetryBudgetState($0, now: now) }))
        self.hedging = hedging
        self.breakerPolicy = breaker
    }

    /// A call began: it earns its share of the retry budget.
    func beginCall() {
        state.withLock { $0.budget?.deposit() }
    }

    /// Whether an attempt may go now; `nil` admits it as an ordinary attempt. An admitted
    /// attempt is counted in flight (for hedging, under the same lock) until
    /// ``attemptEnded()``.
    func admit(now: ContinuousClock.Instant) -> CircuitBreakerState.Admission {
        state.withLock { state in
            let admission = state.breaker?.admit(now: now) ?? .allowed(isProbe: false)
            if countsAttempts, case .allowed = admission { state.attemptsInFlight += 1 }
            return admission
        }
    }

    /// What ``admit(now:)`` would decide at `now`, without taking a probe's place.
    func peek(now: ContinuousClock.Instant) -> CircuitBreakerState.Admission {
        state.withLock { state in
            guard var copy = state.breaker else { return .allowed(isProbe: false) }
            return copy.admit(now: now)
        }
    }

    /// Takes one retry (or hedge) from the budget; `true` without a budget.
    func withdrawRetry(now: ContinuousClock.Instant) -> Bool {
        state.withLock { $0.budget?.withdraw(now: now) } ?? true
    }

    /// An attempt ``admit(now:)`` let go ended at `now`, under one lock: it leaves the
    /// attempts in flight, its `outcome` is counted by the breaker (`nil` counts nothing),
    /// and the `latency` of a success feeds the hedging delay.
    /// Without a breaker, or without hedging, there is nothing to keep of the outcome or
    /// of the latency, and the lock is not taken for them.
    func attemptEnded(_ outcome: CircuitBreakerState.Outcome?, isProbe: Bool, now: ContinuousClock.Instant, latency: Duration?) {
        let countsAttempts = countsAttempts
        let counted = breakerPolicy == nil ? nil : outcome
        let sampled = hedging == nil ? nil : latency
        guard countsAttempts || counted != nil || sampled != nil else { return }
        state.withLock { state in
            if countsAttempts { state.attemptsInFlight -= 1 }
            if let counted { state.breaker?.record(counted, isProbe: isProbe, now: now) }
            if let sampled { state.latency.record(sampled) }
        }
    }

    /// Whether attempts are counted in flight: only for hedging's
    /// ``HedgingPolicy/maximumAttemptsInFlight``.
    private var countsAttempts: Bool { hedging?.maximumAttemptsInFlight != nil }

    /// The attempts counted in flight (0 where hedging does not count them).
    var attemptsInFlight: Int { state.withLock { $0.attemptsInFlight } }

    /// Whether the origin is quiet enough for a hedge: fewer attempts in flight than
    /// ``HedgingPolicy/maximumAttemptsInFlight``.
    func admitsHedge() -> Bool {
        guard let limit = hedging?.maximumAttemptsInFlight else { return true }
        return state.withLock { $0.attemptsInFlight } < limit
    }

    /// How long an attempt of a hedged request waits before its hedge goes; `nil` for none.
    func hedgeDelay() -> Duration? {
        guard let hedging else { return nil }
        switch hedging.delay {
        case .fixed(let delay): return delay
        case .percentile(let quantile, let minimum):
            return state.withLock { $0.latency.value(at: quantile) }.map { max($0, minimum) }
        }
    }

    /// Where the breaker stands (for diagnostics and metrics).
    var breakerPhase: CircuitBreakerState.Phase? {
        state.withLock { $0.breaker?.phase }
    }
}
