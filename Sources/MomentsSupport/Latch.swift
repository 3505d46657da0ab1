
/// A one-shot signal: tasks wait until it is opened, then pass at once.
///
/// Waiting ignores cancellation: a waiter that must keep an order (the next link of a
/// chain) passes only after the one before it.
package final class Latch: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = PThreadMutex(State())

    package init() {}

    /// Whether the latch was opened.
    package var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the latch, letting every waiter pass. Opening it again does nothing.
    package func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            guard !state.isOpen else { return [] }
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the latch is open.
    package nonisolated(nonsending) func wait() async {
        if state.withLock({ $0.isOpen }) { return }
        await withCheckedContinuation { continuation in
            let isOpen = state.withLock { state -> Bool in
                if state.isOpen { return true }
                state.waiters.append(continuation)
                return false
            }
            if isOpen { continuation.resume() }
        }
    }
}
