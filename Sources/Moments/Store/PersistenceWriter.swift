import Synchronization

/// Writes the store's batches to persistence one at a time, in the order the store
/// made them, so persisted state never goes back behind memory.
///
/// Batches waiting while a write runs are merged into one (a later write of a record
/// wins). A batch that fails is merged into the next write, so persistence catches up
/// with memory once it works again. Every waiter of a write learns its outcome.
final class PersistenceWriter: Sendable {
    private typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var pending = PersistenceBatch()
        var pendingTickets: [UInt64] = []
        /// A batch that failed, retried with the next write.
        var backlog = PersistenceBatch()
        var nextTicket: UInt64 = 0
        var isWriting = false
        var outcomes: [UInt64: Result<Void, any Error>] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let persistence: any MomentsPersistence
    private let state = Mutex(State())

    init(persistence: any MomentsPersistence) {
        self.persistence = persistence
    }

    /// Queues `batch` behind every batch queued before it; returns the ticket to
    /// ``wait(for:)`` with, or `nil` for an empty batch.
    func enqueue(_ batch: PersistenceBatch) -> UInt64? {
        guard !batch.isEmpty else { return nil }
        let (ticket, start) = state.withLock { state -> (UInt64, Bool) in
            state.nextTicket += 1
            state.pending.merge(batch)
            state.pendingTickets.append(state.nextTicket)
            let start = !state.isWriting
            state.isWriting = true
            return (state.nextTicket, start)
        }
        if start { Task { await drain() } }
        return ticket
    }

    /// Waits until the write holding `ticket` ends.
    ///
    /// - Throws: the persistence's error if that write failed.
    func wait(for ticket: UInt64?) async throws {
        guard let ticket else { return }
        try await withCheckedThrowingContinuation { (continuation: Waiter) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let outcome = state.outcomes.removeValue(forKey: ticket) { return outcome }
                state.waiters[ticket] = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Waits until nothing is queued or being written.
    func idle() async {
        await withCheckedContinuation { continuation in
            let isIdle = state.withLock { state -> Bool in
                guard state.isWriting else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if isIdle { continuation.resume() }
        }
    }

    /// Whether a write is queued or running.
    var isBusy: Bool { state.withLock { $0.isWriting } }

    private func drain() async {
        while true {
            let next = state.withLock { state -> (PersistenceBatch, [UInt64])? in
                guard !state.pendingTickets.isEmpty else {
                    state.isWriting = false
                    let idle = state.idleWaiters
                    state.idleWaiters = []
                    for waiter in idle { waiter.resume() }
                    return nil
                }
                var batch = state.backlog
                batch.merge(state.pending)
                defer {
                    state.pending = PersistenceBatch()
                    state.pendingTickets = []
                }
                return (batch, state.pendingTickets)
            }
            guard let (batch, tickets) = next else { break }
            let outcome: Result<Void, any Error>
            do {
                try await persistence.save(batch)
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            let waiters = state.withLock { state -> [Waiter] in
                if case .failure = outcome { state.backlog = batch } else { state.backlog = PersistenceBatch() }
                var waiting: [Waiter] = []
                for ticket in tickets {
                    if let waiter = state.waiters.removeValue(forKey: ticket) {
                        waiting.append(waiter)
                    } else {
                        state.outcomes[ticket] = outcome
                    }
                }
                return waiting
            }
            for waiter in waiters { waiter.resume(with: outcome) }
        }
    }
}
