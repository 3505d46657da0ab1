public import Foundation
import MomentsSupport

/// Where the SDK reads the time and waits for it: every deadline, backoff, hedging delay,
/// breaker window and cache age comes from one clock, so a test can move time instead of
/// waiting for it.
///
/// ``SystemClock`` is the default everywhere; `ManualClock` (in the `MomentsTesting`
/// product) stands still until a test advances it.
///
/// For example:
/// ```swift
/// let clock = ManualClock()
/// let client = HTTPClient(baseURL: url, transport: transport) { $0.clock = clock }
/// // … a call waits out a 200 ms backoff …
/// clock.advance(by: .milliseconds(200))
/// ```
public protocol MomentsClock: Sendable {
    /// The current instant, on the timeline of `ContinuousClock`.
    var now: ContinuousClock.Instant { get }
    /// The current date and time: what `Retry-After` dates and cached answers' ages are
    /// measured against.
    var date: Date { get }
    /// Runs `action` once `deadline` has come (at once if it has passed), on a thread of
    /// the clock's, unless the returned wake-up is cancelled first.
    ///
    /// An action must be short and must not block: it resumes a waiter or marks a
    /// failure.
    func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp
}

/// An action a ``MomentsClock`` will run at a deadline; cancel it to forget it.
public struct ClockWakeUp: Sendable {
    private enum Cancelling: Sendable {
        case action(@Sendable () -> Void)
        /// The system clock's wake-ups: the timer and the token, without a closure
        /// (and its allocation) around them.
        case timer(DeadlineTimer, token: UInt64)
    }

    private let cancelling: Cancelling

    /// A wake-up that `cancel` forgets.
    public init(cancel: @escaping @Sendable () -> Void) {
        self.cancelling = .action(cancel)
    }

    /// A wake-up `timer` scheduled under `token`.
    init(timer: DeadlineTimer, token: UInt64) {
        self.cancelling = .timer(timer, token: token)
    }

    /// Forgets the action if it has not run; it will not run. Calling it again does nothing.
    public func cancel() {
        switch cancelling {
        case .action(let cancel): cancel()
        case .timer(let timer, let token): timer.cancel(token)
        }
    }
}

extension MomentsClock {
    /// Suspends until `deadline`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(until deadline: ContinuousClock.Instant) async throws {
        if Task.isCancelled { throw CancellationError() }
        if deadline <= now { return }
        let sleeper = ClockSleeper()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard sleeper.wait(continuation) else { return }
                let wakeUp = wake(at: deadline) { sleeper.end(with: .success(())) }
                sleeper.hold(wakeUp)
            }
        } onCancel: {
            sleeper.end(with: .failure(CancellationError()))
        }
    }

    /// Suspends for `duration`.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled first.
    public func sleep(for duration: Duration) async throws {
        try await sleep(until: now + duration)
    }
}
