import Dispatch

/// Runs actions at deadlines with one timer for all of them, instead of one task per
/// request: scheduling and cancelling cost a heap insertion and a dictionary removal
/// under a lock.
///
/// The timer is a dispatch timer on a serial queue of its own, not a task: a deadline
/// must fire on time even when every one of Swift's cooperative threads is busy.
package final class DeadlineTimer: Sendable {
    /// A scheduled action as the dictionary holds it. Wrapped in a struct, the closure
    /// is stored as it is; stored bare as a dictionary's value, it would be wrapped in a
    /// reabstraction thunk, one more allocation per action scheduled.
    private struct Action {
        let run: @Sendable () -> Void
    }

    private struct Entry {
        let deadline: ContinuousClock.Instant
        let id: UInt64
    }

    /// Safety of `@unchecked Sendable`: its one member that is not `Sendable`, the
    /// dispatch timer, is reached only under the lock (and a dispatch source may be
    /// used from any thread).
    private struct State: @unchecked Sendable {
        var heap: [Entry] = []
        var actions: [UInt64: Action] = [:]
        var nextID: UInt64 = 0
        var waker: (any DispatchSourceTimer)?
        var wakerDeadline: ContinuousClock.Instant?
    }

    private let state = PThreadMutex(State())
    private let queue = DispatchQueue(label: "MomentsNetworking.DeadlineTimer")

    package init() {}

    deinit {
        state.withLock { $0.waker?.cancel() }
    }

    /// Runs `action` after `delay` unless cancelled first; returns the token to cancel with.
    package func schedule(after delay: Duration, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        schedule(at: ContinuousClock.now + delay, action)
    }

    /// Runs `action` at `deadline` (at once if it has passed) unless cancelled first;
    /// returns the token to cancel with.
    package func schedule(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> UInt64 {
        state.withLock { state in
            state.nextID += 1
            let id = state.nextID
            state.actions[id] = Action(run: action)
            Self.push(Entry(deadline: deadline, id: id), into: &state.heap)
            if state.heap.count > 1_024, state.heap.count > 4 * state.actions.count { Self.compact(&state) }
            if state.wakerDeadline.map({ deadline < $0 }) ?? true { startWaker(at: deadline, in: &state) }
            return id
        }
    }

    /// Forgets the action of `token`; it will not run.
    ///
    /// Its entry stays in the heap until its deadline (or a compaction) drops it, unless
    /// it is the heap's last element, a leaf, which goes at once: the entry of a call that
    /// ends before anything is scheduled after it, the common case.
    package func cancel(_ token: UInt64) {
        _ = state.withLock { state in
            if state.heap.last?.id == token { state.heap.removeLast() }
            return state.actions.removeValue(forKey: token)
        }
    }

    package var pendingCount: Int { state.withLock { $0.actions.count } }

    /// Sets the one wake-up to `deadline`: the dispatch timer made for the first one is
    /// set again each time (a one-shot timer that fired stays, idle, until set again),
    /// not cancelled and made anew.
    private func startWaker(at deadline: ContinuousClock.Instant, in state: inout State) {
        state.wakerDeadline = deadline
        let remaining = max(.zero, deadline - ContinuousClock.now)
        let (seconds, attoseconds) = remaining.components
        let nanoseconds = Int(clamping: seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let waker = state.waker ?? makeWaker()
        waker.schedule(deadline: .now() + .nanoseconds(nanoseconds), leeway: .milliseconds(1))
        state.waker = waker
    }

    /// The dispatch timer that runs ``fire()``, made (and resumed) once, unset.
    private func makeWaker() -> any DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.setEventHandler { [weak self] in self?.fire() }
        timer.resume()
        return timer
    }

    private func fire() {
        let due = state.withLock { state -> [Action] in
            let now = ContinuousClock.now
            var due: [Action] = []
            // Cancelled entries at the top go too, so the next wake-up is for an action
            // that is still wanted, not for every request that already finished.
            while let first = state.heap.first {
                guard let action = state.actions[first.id] else {
                    Self.popFirst(from: &state.heap)
                    continue
                }
                guard first.deadline <= now else { break }
                Self.popFirst(from: &state.heap)
                state.actions[first.id] = nil
                due.append(action)
            }
            state.wakerDeadline = nil
            if let next = state.heap.first { startWaker(at: next.deadline, in: &state) }
            return due
        }
        for action in due { action.run() }
    }

    // MARK: Binary heap ordered by deadline

    private static func push(_ entry: Entry, into heap: inout [Entry]) {
        heap.append(entry)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].deadline < heap[parent].deadline else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private static func popFirst(from heap: inout [Entry]) {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        var parent = 0
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].deadline < heap[smallest].deadline { smallest = left }
            if right < heap.count, heap[right].deadline < heap[smallest].deadline { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }

    /// Drops entries whose actions were cancelled, so finished requests do not pile up.
    private static func compact(_ state: inout State) {
        let live = state.heap.filter { state.actions[$0.id] != nil }
        state.heap.removeAll(keepingCapacity: true)
        for entry in live { push(entry, into: &state.heap) }
    }
}
