import MomentsSupport
import MomentsHTTP

/// When a client stops sending to a failing server, and how it finds its way back.
///
/// The breaker watches the outcomes of the calls of the last ``window``. Once at least
/// ``minimumCalls`` ended there and ``failureRatio`` of them failed (no answer, a
/// timeout, or a status in ``failureStatusCodes``; never a status the caller caused,
/// such as 400, 401, 403 or 404, and never a cancellation), it opens: every call fails
/// at once with `HTTPClientError.Code.circuitOpen`, carrying in
/// `HTTPClientError.retryAfter` when the breaker will try again. After ``openDuration``
/// (or the server's `Retry-After`, if longer, up to ``maximumOpenDuration``) it lets
/// ``probes`` calls through; one that succeeds closes it, one that fails opens it again.
///
/// For example:
/// ```swift
/// configuration.circuitBreaker = CircuitBreakerPolicy(openDuration: .seconds(5))
/// configuration.circuitBreaker = nil   // never stop sending
/// ```
public struct CircuitBreakerPolicy: Sendable, Hashable {
    /// The share of failed calls in the window that opens the breaker. The default is 0.5.
    public var failureRatio: Double
    /// The fewest calls in the window before the breaker may open. The default is 10.
    public var minimumCalls: Int
    /// How far back outcomes count. The default is 10 seconds.
    public var window: Duration
    /// How long the breaker stays open before it lets a probe through (the probe
    /// interval). The default is 2 seconds.
    public var openDuration: Duration
    /// The longest a server's `Retry-After` may keep the breaker open. The default is
    /// 60 seconds.
    public var maximumOpenDuration: Duration
    /// Calls let through at once while the breaker probes. The default is 1.
    public var probes: Int
    /// Statuses that count as the server failing. The default is 429, 500, 502, 503 and 504.
    public var failureStatusCodes: Set<Int>

    /// A policy; every default is stated on its property.
    public init(
        failureRatio: Double = 0.5,
        minimumCalls: Int = 10,
        window: Duration = .seconds(10),
        openDuration: Duration = .seconds(2),
        maximumOpenDuration: Duration = .seconds(60),
        probes: Int = 1,
        failureStatusCodes: Set<Int> = [429, 500, 502, 503, 504]
    ) {
        self.failureRatio = min(1, max(0, failureRatio))
        self.minimumCalls = max(1, minimumCalls)
        self.window = window
        self.openDuration = openDuration
        self.maximumOpenDuration = max(openDuration, maximumOpenDuration)
        self.probes = max(1, probes)
        self.failureStatusCodes = failureStatusCodes
    }
}

/// The state of a ``CircuitBreakerPolicy``'s breaker: a pure state machine, the time
/// given to it, deciding and never waiting.
struct CircuitBreakerState: Sendable {
    /// Where the breaker stands.
    enum Phase: Equatable, Sendable {
        /// Calls go through; outcomes are counted.
        case closed
        /// Calls fail at once until the instant.
        case open(until: ContinuousClock.Instant)
        /// Up to the policy's probes go through; their outcome decides.
        case halfOpen(probesInFlight: Int)
    }

    /// How a call ended, as the breaker counts it.
    enum Outcome: Sendable {
        /// An answer that is not the server failing.
        case success
        /// No answer, a timeout, or a failure status; with the server's `Retry-After`.
        case failure(retryAfter: Duration?)
        /// Says nothing of the server's health (the caller's fault, a cancellation).
        case ignored
    }

    /// Whether a call may go.
    enum Admission: Equatable, Sendable {
        /// Yes; a probe's outcome decides the breaker's state.
        case allowed(isProbe: Bool)
        /// No: the breaker will let a call through again at `until`.
        case rejected(until: ContinuousClock.Instant)
    }

    let policy: CircuitBreakerPolicy
    private(set) var phase: Phase = .closed
    /// The window's outcomes while closed, counted in ten buckets of a tenth of the
    /// window each (bounded memory whatever the rate of calls).
    private var buckets: [(start: ContinuousClock.Instant, calls: Int, failures: Int)] = []

    init(_ policy: CircuitBreakerPolicy) {
        self.policy = policy
    }

    /// Decides whether a call may go now.
    mutating func admit(now: ContinuousClock.Instant) -> Admission {
        switch phase {
        case .closed:
            return .allowed(isProbe: false)
        case .open(let until):
            guard now >= until else { return .rejected(until: until) }
            phase = .halfOpen(probesInFlight: 1)
            return .allowed(isProbe: true)
        case .halfOpen(let inFlight):
            guard inFlight < policy.probes else { return .rejected(until: now + policy.openDuration) }
            phase = .halfOpen(probesInFlight: inFlight + 1)
            return .allowed(isProbe: true)
        }
    }

    /// Counts how a call admitted with `admission` ended.
    mutating func record(_ outcome: Outcome, isProbe: Bool, now: ContinuousClock.Instant) {
        switch (phase, isProbe) {
        case (.halfOpen(let inFlight), true):
            switch outcome {
            case .success:
                phase = .closed
                buckets.removeAll()
            case .failure(let retryAfter):
                open(now: now, retryAfter: retryAfter)
            case .ignored:
                phase = .halfOpen(probesInFlight: max(0, inFlight - 1))
            }
        case (.closed, _):
            let failed: Bool
            switch outcome {
            case .success: failed = false
            case .failure: failed = true
            case .ignored: return
            }
            count(failed: failed, now: now)
            let calls = buckets.reduce(0) { $0 + $1.calls }
            guard calls >= policy.minimumCalls else { return }
            let failures = buckets.reduce(0) { $0 + $1.failures }
            if Double(failures) >= policy.failureRatio * Double(calls) {
                if case .failure(let retryAfter) = outcome { open(now: now, retryAfter: retryAfter) } else { open(now: now, retryAfter: nil) }
            }
        default:
            // A call admitted before the breaker opened, or a stale probe: its outcome
            // says nothing the breaker does not already act on.
            return
        }
    }

    private mutating func count(failed: Bool, now: ContinuousClock.Instant) {
        let width = policy.window / 10
        let windowStart = now - policy.window
        if let first = buckets.firstIndex(where: { $0.start + width > windowStart }) {
            buckets.removeFirst(first)
        } else {
            buckets.removeAll()
        }
        if let last = buckets.last, now < last.start + width {
            buckets[buckets.count - 1].calls += 1
            buckets[buckets.count - 1].failures += failed ? 1 : 0
        } else {
            buckets.append((now, 1, failed ? 1 : 0))
        }
    }

    private mutating func open(now: ContinuousClock.Instant, retryAfter: Duration?) {
        let requested = retryAfter.map { min($0, policy.maximumOpenDuration) } ?? .zero
        phase = .open(until: now + max(policy.openDuration, requested))
        buckets.removeAll()
    }
}
