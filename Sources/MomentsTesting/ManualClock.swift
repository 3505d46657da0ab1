public import Foundation
public import MomentsHTTP
import MomentsSupport

/// A `MomentsClock` that stands still until a test moves it: deadlines, backoffs,
/// hedging delays and cache ages then happen when the test says, however busy the
/// machine is.
///
/// For example:
/// ```swift
/// let clock = ManualClock()
/// let client = HTTPClient(baseURL: url, transport: transport) { $0.clock = clock }
/// async let answer = client.send(request)       // its first attempt fails with 503
/// await clock.waitForWakeUps(1)                 // the retry's backoff is waiting
/// clock.advance(by: .seconds(1))                // … and is over
/// ```
///
/// Wake-ups run in the order of their deadlines, on the thread that advances the clock.
public final class ManualClock: MomentsClock {
    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
        let action: @Sendable () -> Void
    }

    private struct State {
        var offset: Duration = .zero
        var entries: [UInt64: Entry] = [:]
        var nextID: UInt64 = 0
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let origin: ContinuousClock.Instant
    private let originDate: Date
    private let state = PThreadMutex(State())

    /// A clock standing at `date` (by default 14 November 2023, 22:13:20 UTC).
    public init(date: Date = Date(timeIntervalSince1970: 1_700_000_000)) {
        origin = .now
        originDate = date
    }

    /// The instant the clock stands at.
    public var now: ContinuousClock.Instant { origin + state.withLock { $0.offset } }

    /// The date the clock stands at.
    public var date: Date { originDate.addingTimeInterval(state.withLock { $0.offset }.seconds) }

    /// How far the clock has been moved since it was made.
    public var elapsed: Duration { state.withLock { $0.offset } }

    /// Wake-ups waiting for their deadline.
    public var pendingWakeUps: Int { state.withLock { $0.entries.count } }

    /// Runs `action` when the clock is advanced to `deadline`, or at once if it is there.
    public func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp {
        let (id, watchers) = state.withLock { state -> (UInt64?, [CheckedContinuation<Void, Never>]) in
            guard deadline > origin + state.offset else { return (nil, []) }
            state.nextID += 1
            state.entries[state.nextID] = Entry(deadline: deadline, id: state.nextID, action: action)
            return (state.nextID, Self.satisfiedWatchers(&state))
        }
        for watcher in watchers { watcher.resume() }
        guard let id else {
            action()
            return ClockWakeUp {}
        }
        return ClockWakeUp { [weak self] in
            _ = self?.state.withLock { $0.entries.removeValue(forKey: id) }
        }
    }

    /// Moves the clock forward by `duration`, running every wake-up that comes due, in
    /// the order of their deadlines (the clock stands at each deadline as its wake-up runs).
    public func advance(by duration: Duration) {
        let target = now + duration
        while true {
            let due = state.withLock { state -> Entry? in
                let next = state.entries.values.min { ($0.deadline, $0.id) < ($1.deadline, $1.id) }
                guard let next, next.deadline <= target else {
                    state.offset = max(state.offset, target - origin)
                    return nil
                }
                state.entries[next.id] = nil
                state.offset = max(state.offset, next.deadline - origin)
                return next
            }
            guard let due else { return }
            due.action()
        }
    }

    /// Returns once at least `count` wake-ups are waiting: the moment the code under test
    /// has begun to wait on the clock (a backoff, a deadline, a hedging delay).
    public func waitForWakeUps(_ count: Int = 1) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.entries.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private static func satisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        let count = state.entries.count
        let ready = state.watchers.filter { $0.count <= count }.map(\.continuation)
        state.watchers.removeAll { $0.count <= count }
        return ready
    }
}
