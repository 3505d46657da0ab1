import MomentsHTTP
import MomentsSupport
import Testing

/// `SystemClock`'s wake-ups: one cancelled never runs, one not cancelled does.
@Suite struct SystemClockTests {
    /// Two wake-ups 1 ms apart, the earlier cancelled: once the later one ran, the
    /// timer has passed the earlier one's deadline, so it would have run by then.
    @Test(.timeLimit(.minutes(1))) func aCancelledWakeUpNeverRuns() async {
        let clock = SystemClock()
        let cancelledRan = Latch()
        let keptRan = Latch()
        let deadline = clock.now + .milliseconds(20)
        let cancelled = clock.wake(at: deadline) { cancelledRan.open() }
        _ = clock.wake(at: deadline + .milliseconds(1)) { keptRan.open() }
        cancelled.cancel()
        cancelled.cancel()  // a second cancel does nothing
        await keptRan.wait()
        #expect(!cancelledRan.isOpen)
    }
}
