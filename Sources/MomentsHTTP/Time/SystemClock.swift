public import Foundation
import MomentsSupport

/// The machine's clock: `ContinuousClock` for instants, `Date()` for dates, and one
/// dispatch timer for every wake-up of the process (a deadline fires on time even when
/// every one of Swift's cooperative threads is busy).
public struct SystemClock: MomentsClock {
    /// The machine's clock.
    public init() {}

    /// `ContinuousClock.now`.
    public var now: ContinuousClock.Instant { .now }

    /// `Date()`.
    public var date: Date { Date() }

    /// Runs `action` at `deadline` on the process's timer thread.
    public func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp {
        let timer = Self.timer
        return ClockWakeUp(timer: timer, token: timer.schedule(at: deadline, action))
    }

    /// The one timer of every system clock.
    private static let timer = DeadlineTimer()
}
