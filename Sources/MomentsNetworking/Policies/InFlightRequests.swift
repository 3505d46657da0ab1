import MomentsSupport
import MomentsHTTP

/// The requests a client has in flight, so ``HTTPClient/cancelAll()`` can cancel them and
/// a latest-wins request can cancel the one it replaces.
final class InFlightRequests: Sendable {
    /// Where the client is in its life (see ``HTTPClient/shutdown(gracePeriod:)``).
    enum Phase {
        /// Taking requests.
        case open
        /// Shutting down: no new request; later callers of the shutdown wait here.
        case closing(shutdownWaiters: [CheckedContinuation<Bool, Never>])
        /// Shut down.
        case closed
    }

    private struct State {
        var nextID = 0
        /// The call task of each request in flight, by id.
        var tasks: [Int: CallTask] = [:]
        var latest: [String: Int] = [:]
        var members: [String: Set<Int>] = [:]
        var phase = Phase.open
        /// Callers of ``waitUntilClosing(orCancelled:)``, by id.
        var closingWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Waiters for the last request to end.
        var emptyWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        /// Callers of ``waitUntilCount(is:)``.
        var countWatchers = CountWatchers()
        var nextWaiterID = 0

        mutating func takeEmptyWaiters() -> [CheckedContinuation<Void, Never>] {
            guard tasks.isEmpty, !emptyWaiters.isEmpty else { return [] }
            defer { emptyWaiters = [:] }
            return Array(emptyWaiters.values)
        }

        /// The watchers waiting for the count of requests now in flight.
        mutating func takeCountWatchers() -> [CountWatchers.Watcher] {
            countWatchers.take(reaching: tasks.count)
        }
    }

    private let state = PThreadMutex(State())

    /// Registers a request; if `latestWinsKey` names one already in flight, that one is
    /// cancelled. Returns the id to unregister with, or `nil` once a shutdown has begun:
    /// the check and the registration are one step, so no request slips in after
    /// ``beginClosing()`` and escapes the shutdown's wait.
    func register(_ task: CallTask, latestWinsKey: String?, groups: Set<String> = []) -> Int? {
        guard let (id, replaced, watchers) = state.withLock({ state -> (Int, CallTask?, [CountWatchers.Watcher])? in
            guard case .open = state.phase else { return nil }
            state.nextID += 1
            let id = state.nextID
            state.tasks[id] = task
            for group in groups { state.members[group, default: []].insert(id) }
            var replaced: CallTask?
            if let latestWinsKey {
                if let previous = state.latest[latestWinsKey] { replaced = state.tasks[previous] }
                state.latest[latestWinsKey] = id
            }
            return (id, replaced, state.takeCountWatchers())
        }) else { return nil }
        for watcher in watchers { watcher.resume() }
        replaced?.cancel()
        return id
    }

    func unregister(_ id: Int, latestWinsKey: String?, groups: Set<String> = []) {
        let empty = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.tasks[id] = nil
            defer { if let latestWinsKey, state.latest[latestWinsKey] == id { state.latest[latestWinsKey] = nil } }
            for group in groups {
                state.members[group]?.remove(id)
                if state.members[group]?.isEmpty == true { state.members[group] = nil }
            }
            return state.takeEmptyWaiters() + state.takeCountWatchers()
        }
        for waiter in empty { waiter.resume() }
    }

    /// Returns once exactly `count` requests are in flight: at once if they are now,
    /// else when a request beginning or ending makes them so.
    func waitUntilCount(is count: Int) async {
        await CountWatchers.wait { watcher in
            state.withLock { $0.countWatchers.register(watcher, for: count, now: $0.tasks.count) }
        }
    }

    // MARK: Shutting down

    /// Stops taking requests. Returns `true` for the first caller, who shuts the client
    /// down and then calls ``finishClosing()``; a later caller waits here until then and
    /// gets `false`.
    func beginClosing() async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let first = state.withLock { state -> Bool? in
                switch state.phase {
                case .open:
                    state.phase = .closing(shutdownWaiters: [])
                    let waiters = state.closingWaiters.values
                    state.closingWaiters = [:]
                    for waiter in waiters { waiter.resume() }
                    return true
                case .closing(let waiters):
                    state.phase = .closing(shutdownWaiters: waiters + [continuation])
                    return nil
                case .closed:
                    return false
                }
            }
            if let first { continuation.resume(returning: first) }
        }
    }

    /// Returns once a shutdown has begun, or the calling task is cancelled.
    func waitUntilClosingOrCancelled() async {
        let id = state.withLock { state in
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state -> Bool in
                    guard case .open = state.phase, !Task.isCancelled else { return false }
                    state.closingWaiters[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.closingWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Ends the shutdown: its later callers return.
    func finishClosing() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            defer { state.phase = .closed }
            if case .closing(let waiters) = state.phase { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume(returning: false) }
    }

    /// Returns once no request is in flight, or at `deadline` on `clock` (if any);
    /// returns whether none is.
    func waitUntilEmpty(until deadline: ContinuousClock.Instant?, on clock: any MomentsClock) async -> Bool {
        let wakeUp = PThreadMutex<ClockWakeUp?>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let waiterID = state.withLock { state -> Int? in
                guard !state.tasks.isEmpty else { return nil }
                state.nextWaiterID += 1
                state.emptyWaiters[state.nextWaiterID] = continuation
                return state.nextWaiterID
            }
            guard let waiterID else { return continuation.resume() }
            // Armed once the waiter is registered: an expiry finds it, or finds it gone.
            guard let deadline else { return }
            let armed = clock.wake(at: deadline) { [self] in
                state.withLock { $0.emptyWaiters.removeValue(forKey: waiterID) }?.resume()
            }
            wakeUp.withLock { $0 = armed }
        }
        wakeUp.withLock { $0?.cancel() }
        return count == 0
    }

    func cancelAll() {
        let tasks = state.withLock { Array($0.tasks.values) }
        for task in tasks { task.cancel() }
    }

    /// Cancels the requests in flight that belong to `group`.
    func cancelAll(in group: String) {
        let tasks = state.withLock { state in (state.members[group] ?? []).compactMap { state.tasks[$0] } }
        for task in tasks { task.cancel() }
    }

    var count: Int { state.withLock { $0.tasks.count } }

    /// The number of requests in flight in `group`.
    func count(in group: String) -> Int { state.withLock { $0.members[group]?.count ?? 0 } }
}
