/// When a slow read is sent a second time, so one stalled server does not set the
/// caller's tail latency (Dean and Barroso, "The Tail at Scale").
///
/// A request whose ``RequestOptions/hedges`` is true, and that may be retried (idempotent:
/// never a mutation), gets one more attempt if its first has not answered after
/// ``delay``: the first good answer wins and the other attempt is cancelled (an answer
/// is not good when the circuit breaker counts its status as a failure or the retry
/// policy would retry it; it waits for the other attempt, as a failure does). Each hedged
/// attempt draws on the ``RetryBudget``, so hedging never adds more than the budget
/// allows. No hedge goes while the origin is busy (``maximumAttemptsInFlight``). Until
/// a hedge goes, a call pays only for a wake-up on the client's clock: no second task.
///
/// For example:
/// ```swift
/// configuration.hedging = HedgingPolicy(delay: .fixed(.milliseconds(200)))
/// configuration.hedging = nil   // never hedge
/// ```
public struct HedgingPolicy: Sendable, Hashable {
    /// How long the first attempt may take before the second is sent.
    public enum Delay: Sendable, Hashable {
        /// Always this long.
        case fixed(Duration)
        /// The given quantile (0.95: the 95th percentile) of the latency of the
        /// client's recent successful attempts, and at least `minimum`; no hedge until
        /// 20 attempts have been measured.
        case percentile(Double, minimum: Duration)
    }

    /// When the second attempt goes. The default is the 95th percentile of recent
    /// latency, and at least 10 ms.
    public var delay: Delay

    /// How many attempts the client may have in flight to the origin (of every request,
    /// the slow one included) for a hedge to go; `nil`: any number. The default is 6,
    /// `URLSessionTransport`'s connections per host (set it to your transport's).
    ///
    /// With that many in flight, a slow answer is more likely the transport's own queue
    /// or a loaded server than one stalled server: a second copy waits behind the others
    /// and adds to the load that made the first slow. When the delay ends with the
    /// origin that busy, the call waits for its attempt and spends nothing from the
    /// budget.
    public var maximumAttemptsInFlight: Int?

    /// A policy; the defaults are stated on its properties.
    public init(delay: Delay = .percentile(0.95, minimum: .milliseconds(10)), maximumAttemptsInFlight: Int? = 6) {
        self.delay = delay
        self.maximumAttemptsInFlight = maximumAttemptsInFlight
    }
}

/// The latency of a client's recent successful attempts, for hedging after a
/// percentile: the last 256, with the percentile recomputed every 32 of them.
struct LatencyTracker: Sendable {
    private var samples: [Duration] = []
    private var next = 0
    private var sinceComputed = 0
    private var cached: (quantile: Double, value: Duration)?
    private var scratch: [Duration] = []
    static let capacity = 256
    static let minimumSamples = 20

    mutating func record(_ latency: Duration) {
        if samples.count < Self.capacity {
            samples.append(latency)
        } else {
            samples[next] = latency
            next = (next + 1) % Self.capacity
        }
        sinceComputed += 1
    }

    /// The `quantile` of the recorded latencies, or `nil` until enough were recorded.
    mutating func value(at quantile: Double) -> Duration? {
        guard samples.count >= Self.minimumSamples else { return nil }
        if let cached, cached.quantile == quantile, sinceComputed < 32 { return cached.value }
        let index = min(samples.count - 1, max(0, Int((Double(samples.count) * quantile).rounded(.up)) - 1))
        // The index-th smallest sample, selected in a copy kept for the purpose (no sort,
        // and no allocation once the copy has grown).
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: samples)
        let value = Self.select(index, in: &scratch)
        cached = (quantile, value)
        sinceComputed = 0
        return value
    }

    /// The `k`-th smallest element of `values` (0-based), which it reorders: Hoare's
    /// selection, a middle pivot.
    static func select(_ k: Int, in values: inout [Duration]) -> Duration {
        var low = 0, high = values.count - 1
        while low < high {
            let pivot = values[(low + high) / 2]
            var left = low, right = high
            while left <= right {
                while values[left] < pivot { left += 1 }
                while pivot < values[right] { right -= 1 }
                if left <= right {
                    values.swapAt(left, right)
                    left += 1
                    right -= 1
                }
            }
            if k <= right { high = right } else if k >= left { low = left } else { return values[k] }
        }
        return values[k]
    }
}
