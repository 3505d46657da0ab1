import MomentsSupport
import MomentsHTTP

/// At most `limit` exchanges at once; when full, waiting requests are admitted by
/// priority, then in arrival order, at most `maximumQueued` of them (beyond, a request
/// fails at once with `HTTPClientError.Code.overloaded`). Waiting is cancellable, and
/// ends with a `timedOut` failure at the request's deadline: a wake-up on the client's
/// clock, cancelled the moment the wait ends, so a waiter that got its slot leaves
/// nothing behind.
final class ConcurrencyLimiter: Sendable {
    private struct Waiter {
        let id: Int
        let priority: RequestPriority
        let continuation: CheckedContinuation<Void, any Error>
        var deadline: ClockWakeUp?
    }

    private struct State {
        var running = 0
        var nextID = 0
        var waiters: [Waiter] = []
        /// Callers of ``waitUntilWaiting(are:)``.
        var watchers = CountWatchers()

        /// The watchers waiting for the number of requests now waiting.
        mutating func takeWatchers() -> [CountWatchers.Watcher] {
            watchers.take(reaching: waiters.count)
        }
    }

    let limit: Int
    let maximumQueued: Int
    private let clock: any MomentsClock
    private let state = PThreadMutex(State())

    init(limit: Int, maximumQueued: Int = .max, clock: any MomentsClock = SystemClock()) {
        self.limit = max(1, limit)
        self.maximumQueued = max(0, maximumQueued)
        self.clock = clock
    }

    /// Requests waiting for a slot.
    var waiting: Int { state.withLock { $0.waiters.count } }

    /// Returns once exactly `count` requests wait for a slot: at once if they do now,
    /// else when a request beginning or ending its wait makes them so.
    func waitUntilWaiting(are count: Int) async {
        await CountWatchers.wait { watcher in
            state.withLock { $0.watchers.register(watcher, for: count, now: $0.waiters.count) }
        }
    }

    /// Takes a slot if one is free, without waiting: `false` when every slot is taken.
    /// A cancelled task takes none (`cancelled`).
    func takeFreeSlot() throws(HTTPClientError) -> Bool {
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        return state.withLock { state -> Bool in
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
    }

    /// Waits for a slot (until `deadline`), after ``takeFreeSlot()`` found none; a
    /// slot freed meanwhile is taken at once, and a cancelled task takes none.
    func waitForSlot(priority: RequestPriority, deadline: ContinuousClock.Instant? = nil) async throws {
        if let deadline, deadline <= clock.now { throw Self.deadlinePassed(limit) }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let (immediate, watchers) = state.withLock { state -> (Result<Void, any Error>?, [CountWatchers.Watcher]) in
                    if Task.isCancelled { return (.failure(HTTPClientError.cancelled()), []) }
                    if state.running < limit {
                        state.running += 1
                        return (.success(()), [])
                    }
                    if state.waiters.count >= maximumQueued { return (.failure(HTTPClientError.overloaded(queued: state.waiters.count)), []) }
                    // Behind every waiter of the same or higher priority.
                    let index = state.waiters.firstIndex { $0.priority < priority } ?? state.waiters.endIndex
                    state.waiters.insert(Waiter(id: id, priority: priority, continuation: continuation), at: index)
                    return (nil, state.takeWatchers())
                }
                for watcher in watchers { watcher.resume() }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                guard let deadline else { return }
                // The wait ends at the call's deadline, if no slot came first.
                let slots = limit
                let wakeUp = clock.wake(at: deadline) { [weak self] in
                    self?.abandon(id, with: Self.deadlinePassed(slots))
                }
                let stillWaiting = state.withLock { state -> Bool in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return false }
                    state.waiters[index].deadline = wakeUp
                    return true
                }
                if !stillWaiting { wakeUp.cancel() }
            }
        } onCancel: {
            abandon(id, with: .cancelled())
        }
    }

    private static func deadlinePassed(_ limit: Int) -> HTTPClientError {
        .transportFailure(TransportFailure(kind: .timedOut, message: "the call's deadline passed while it waited for one of \(limit) slots"))
    }

    /// Ends waiter `id`'s wait with `error`, if it still waits.
    private func abandon(_ id: Int, with error: HTTPClientError) {
        let (waiter, watchers) = state.withLock { state -> (Waiter?, [CountWatchers.Watcher]) in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return (nil, []) }
            let waiter = state.waiters.remove(at: index)
            return (waiter, state.takeWatchers())
        }
        for watcher in watchers { watcher.resume() }
        guard let waiter else { return }
        waiter.deadline?.cancel()
        waiter.continuation.resume(throwing: error)
    }

    func release() {
        let (next, watchers) = state.withLock { state -> (Waiter?, [CountWatchers.Watcher]) in
            if state.waiters.isEmpty {
                state.running -= 1
                return (nil, [])
            }
            let next = state.waiters.removeFirst()  // the slot passes to it
            return (next, state.takeWatchers())
        }
        for watcher in watchers { watcher.resume() }
        guard let next else { return }
        next.deadline?.cancel()
        next.continuation.resume()
    }
}
