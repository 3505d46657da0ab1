package import Moments
import MomentsSupport

/// Counts what a store reports through its configuration's `observer`, and lets a test
/// wait for it: the store keeps no test hook of its own.
public final class StoreEventLog: Sendable {
    private struct State {
        var sharedEventsApplied = 0
        var unsettledRefetches = 0
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = PThreadMutex(State())

    public init() {}

    /// What to give the store's configuration.
    package var observer: @Sendable (StoreEvent) -> Void {
        { [self] event in record(event) }
    }

    /// Events of the change bus the store has applied.
    public var sharedEventsApplied: Int { state.withLock { $0.sharedEventsApplied } }

    /// Refetches to settle answers that failed.
    public var unsettledRefetches: Int { state.withLock { $0.unsettledRefetches } }

    /// Returns once the store has applied `count` events of the change bus.
    public func waitUntilSharedEventsApplied(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state -> Bool in
                if state.sharedEventsApplied >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    private func record(_ event: StoreEvent) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            switch event {
            case .sharedEventApplied:
                state.sharedEventsApplied += 1
                let applied = state.sharedEventsApplied
                let ready = state.waiters.filter { $0.count <= applied }.map(\.continuation)
                state.waiters.removeAll { $0.count <= applied }
                return ready
            case .refetchToSettleFailed:
                state.unsettledRefetches += 1
                return []
            }
        }
        for waiter in ready { waiter.resume() }
    }
}
