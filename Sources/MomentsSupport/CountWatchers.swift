/// Callers waiting for a count (requests in flight, requests queued) to become a given
/// value: kept under their owner's lock, and resumed outside it by the owner, which
/// hands over the watchers a change of the count satisfied.
///
/// An owner with no watcher pays one check of an empty list per change.
package struct CountWatchers: Sendable {
    package typealias Watcher = CheckedContinuation<Void, Never>

    private var watchers: [(count: Int, watcher: Watcher)] = []

    package init() {}

    /// Waits until the count is `count`: `register`, which the owner runs under its
    /// lock with the caller's continuation, hands it to ``register(_:for:now:)``.
    package static func wait(register: (Watcher) -> Bool) async {
        await withCheckedContinuation { (continuation: Watcher) in
            if register(continuation) { continuation.resume() }
        }
    }

    /// Keeps `watcher` until the count is `count`, unless it is already (`now`); returns
    /// whether it is, and the watcher is then the caller's to resume.
    package mutating func register(_ watcher: Watcher, for count: Int, now: Int) -> Bool {
        if now == count { return true }
        watchers.append((count, watcher))
        return false
    }

    /// Removes and returns the watchers waiting for `count`, the count now: the owner
    /// resumes them once it has let go of its lock.
    package mutating func take(reaching count: Int) -> [Watcher] {
        guard !watchers.isEmpty else { return [] }
        let reached = watchers.filter { $0.count == count }.map(\.watcher)
        if !reached.isEmpty { watchers.removeAll { $0.count == count } }
        return reached
    }
}
