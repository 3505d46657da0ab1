public import Foundation
public import MomentsHTTP

/// The machine's clock with a wall clock `skew` ahead of it (behind, if negative): one
/// instance's clock in a simulation of instances on machines whose clocks disagree, or
/// a process whose answers are certainly later than what another wrote.
public struct SkewedClock: MomentsClock {
    public let skew: Duration
    private let system = SystemClock()

    public init(skew: Duration) {
        self.skew = skew
    }

    public var now: ContinuousClock.Instant { system.now }

    public var date: Date {
        system.date.addingTimeInterval(Double(skew.components.seconds) + Double(skew.components.attoseconds) / 1e18)
    }

    public func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp {
        system.wake(at: deadline, action)
    }
}
