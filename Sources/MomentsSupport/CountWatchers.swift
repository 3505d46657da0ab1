/// Callers waiting for a count (requests in flight, requests queued) to become a given
/// value: kept under their owner's lock, and resumed outside it by the owner, which
/// hands over the watchers a change of the count satisfied.
///
/// An owner with no watcher pays one check of an empty list per change.
package struct CountWatchers: Sendable {
    package typealias Watcher = CheckedContinuation<Void, Never>

    private var watchers: [(count: Int, watcher: Watcher)] = []

    package init() {}

    /// Waits until the count is `count`: `register`, called under the owner's lock with
    /// the caller's continuation, returns whether the count is `count` already (the
    /// caller then returns at once) or adds the continuation with ``add(_:for:)``.
    package static func wait(for count: Int, register: (Watcher) -> Bool) async {
        await withCheckedContinuation { (continuation: Watcher) in
            if register(continuation) { continuation.resume() }
        }
    }

    /// Adds `watcher`, to be resumed once the count is `count`.
    package mutating func add(_ watcher: Watcher, for count: Int) {
        watchers.append((count, watcher))
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
