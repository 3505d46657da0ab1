import MomentsSupport
import MomentsHTTP

/// How many retries a client may add to the requests it sends, in the spirit of gRPC's
/// retry throttling and Finagle's retry budget: each call deposits ``ratio`` of a
/// retry, each retry (and each hedged attempt) withdraws one, and ``minimumPerSecond``
/// retries are allowed whatever the traffic. When the budget is empty, a failed call is
/// not retried: its first failure is returned, with
/// `HTTPClientError.retriesStopped` saying why.
///
/// During an outage this keeps a fleet from multiplying the load on a struggling server:
/// with the defaults, retries add at most 10% to the calls a client makes, plus one a
/// second.
///
/// For example:
/// ```swift
/// configuration.retryBudget = RetryBudget(ratio: 0.2, minimumPerSecond: 2)
/// ```
public struct RetryBudget: Sendable, Hashable {
    /// Retries earned by each call. The default is 0.1: retries add at most 10%.
    public var ratio: Double
    /// Retries allowed per second whatever the traffic (the floor, for a quiet client).
    /// The default is 1.
    public var minimumPerSecond: Double
    /// The most retries saved up from quiet times. The default is 10.
    public var maximumBalance: Double

    /// A budget; every default is stated on its property.
    public init(ratio: Double = 0.1, minimumPerSecond: Double = 1, maximumBalance: Double = 10) {
        self.ratio = max(0, ratio)
        self.minimumPerSecond = max(0, minimumPerSecond)
        self.maximumBalance = max(1, maximumBalance)
    }
}

/// A ``RetryBudget``'s account: a pure state machine, the time given to it.
struct RetryBudgetState: Sendable {
    let budget: RetryBudget
    /// Retries earned by calls; full at first, as if saved up from quiet times.
    private(set) var balance: Double
    /// The floor's tokens, refilled at ``RetryBudget/minimumPerSecond``.
    private(set) var floor: Double
    private var floorRefilled: ContinuousClock.Instant

    init(_ budget: RetryBudget, now: ContinuousClock.Instant) {
        self.budget = budget
        balance = budget.maximumBalance
        floor = max(1, budget.minimumPerSecond)
        floorRefilled = now
    }

    /// A call began: it earns its share of a retry.
    mutating func deposit() {
        balance = min(budget.maximumBalance, balance + budget.ratio)
    }

    /// Takes one retry if the budget allows it; returns whether it did.
    mutating func withdraw(now: ContinuousClock.Instant) -> Bool {
        refill(now: now)
        if balance >= 1 {
            balance -= 1
            return true
        }
        if floor >= 1 {
            floor -= 1
            return true
        }
        return false
    }

    private mutating func refill(now: ContinuousClock.Instant) {
        guard now > floorRefilled, budget.minimumPerSecond > 0 else { return }
        let elapsed = (now - floorRefilled).seconds
        floor = min(max(1, budget.minimumPerSecond), floor + elapsed * budget.minimumPerSecond)
        floorRefilled = now
    }
}
