import Foundation
import MomentsHTTP

/// The machine's clock with a wall clock `skew` ahead of it (behind, if negative): one
/// instance's clock in a simulation of instances on machines whose clocks disagree.
struct SkewedClock: MomentsClock {
    let skew: Duration
    private let system = SystemClock()

    var now: ContinuousClock.Instant { system.now }

    var date: Date {
        system.date.addingTimeInterval(Double(skew.components.seconds) + Double(skew.components.attoseconds) / 1e18)
    }

    func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp {
        system.wake(at: deadline, action)
    }
}
