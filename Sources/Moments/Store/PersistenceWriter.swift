import MomentsSupport

/// Writes the store's batches to persistence one at a time, in the order the store
/// made them, so persisted state never goes back behind memory.
///
/// Batches waiting while a write runs are written together, in order (merged where
/// their confirmation intervals allow: ``WriteQueue``; a later write of a record wins).
/// A write stops at the first batch that fails; that batch and those after it are
/// written before the next write's, so persistence catches up with memory once it
/// works again. Every waiter of a write learns its outcome.
final class PersistenceWriter: Sendable {
    private typealias Waiter = CheckedContinuation<Void, any Error>

    private struct State {
        var pending = WriteQueue()
        var pendingTickets: [UInt64] = []
        /// The batches a failed write left unsaved, written first by the next write.
        var backlog = WriteQueue()
        var nextTicket: UInt64 = 0
        var isWriting = false
        /// Set by ``close()``: nothing more is written.
        var isClosed = false
        var outcomes: [UInt64: Result<Void, any Error>] = [:]
        var waiters: [UInt64: Waiter] = [:]
        var idleWaiters: [CheckedContinuation<Void, Never>] = []

        /// Keeps what a write left unsaved, to be written first by the next write.
        mutating func record(unsaved: WriteQueue) {
            backlog = unsaved
        }

        /// Ends the writing, and wakes whoever waits for it, if nothing is queued;
        /// returns whether it did.
        mutating func finishIfNothingQueued() -> Bool {
            guard pendingTickets.isEmpty else { return false }
            isWriting = false
            let idle = idleWaiters
            idleWaiters = []
            for waiter in idle { waiter.resume() }
            return true
        }
    }

    private let persistence: any MomentsPersistence
    /// Where each save's duration and outcome are counted, if anywhere (`nil` without a
    /// metrics factory, so that no clock is read).
    private let instruments: StoreInstruments?
    private let state = PThreadMutex(State())

    init(persistence: any MomentsPersistence, instruments: StoreInstruments? = nil) {
        self.persistence = persistence
        self.instruments = instruments
    }

    /// What a ticket's holder writes first, boxed: a ticket stays a small value that
    /// the store hands around without copying a batch.
    final class FirstWrite: Sendable {
        let writes: WriteQueue
        init(_ writes: WriteQueue) { self.writes = writes }
    }

    /// A queued batch: its number, or, for a caller who found no write under way, what
    /// that caller writes first (its batch, after any backlog), before the queue.
    struct Ticket {
        let number: UInt64
        fileprivate let firstWrite: FirstWrite?
        /// The writer was closed: the batch was not queued.
        fileprivate var isRefused = false
    }

    /// Queues `batch` behind every batch queued before it. The caller must then
    /// ``wait(for:)`` with the ticket (a caller finding no write under way writes its
    /// batch and then the queue itself there, instead of waking another task).
    ///
    /// An empty batch is queued too while a write runs or a failed batch waits to be
    /// written again: its caller then learns whether persistence caught up with memory.
    /// `nil` for an empty batch otherwise (nothing to write).
    func enqueue(_ batch: PersistenceBatch) -> Ticket? {
        state.withLock { state in
            guard !batch.isEmpty || state.isWriting || !state.backlog.isEmpty else { return nil }
            guard !state.isClosed else { return Ticket(number: 0, firstWrite: nil, isRefused: true) }
            state.nextTicket += 1
            guard !state.isWriting else {
                state.pending.append(batch)
                state.pendingTickets.append(state.nextTicket)
                return Ticket(number: state.nextTicket, firstWrite: nil)
            }
            // Nothing is pending when no write is under way: this batch is next. Only its
            // writer touches the backlog until the write ends.
            state.isWriting = true
            guard !state.backlog.isEmpty else { return Ticket(number: state.nextTicket, firstWrite: FirstWrite(WriteQueue(batch))) }
            var write = state.backlog
            write.append(batch)
            return Ticket(number: state.nextTicket, firstWrite: FirstWrite(write))
        }
    }

    /// Writes the ticket's batch and then the queue if the ticket says so, else waits
    /// until the write holding the ticket's batch ends. It runs on the caller's executor.
    ///
    /// - Throws: the persistence's error if that write failed;
    ///   ``MomentsStoreError/Code-swift.struct/shutDown`` if the writer was closed first.
    nonisolated(nonsending) func wait(for ticket: Ticket?) async throws {
        guard let ticket else { return }
        if ticket.isRefused { throw MomentsStoreError(code: .shutDown, userID: "", momentID: "") }
        guard let write = ticket.firstWrite?.writes else { return try await waitForTurn(ticket) }
        // The ticket's batch is written here, and then what was queued meanwhile (its
        // outcome is the batch's own write's).
        let (outcome, unsaved) = await write.save { await self.save($0) }
        let finished = state.withLock { state -> Bool in
            state.record(unsaved: unsaved)
            return state.finishIfNothingQueued()
        }
        if !finished { await drain() }
        try outcome.get()
    }

    /// Waits until the write holding the ticket's batch ends.
    private nonisolated(nonsending) func waitForTurn(_ ticket: Ticket) async throws {
        try await withCheckedThrowingContinuation { (continuation: Waiter) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if let outcome = state.outcomes.removeValue(forKey: ticket.number) { return outcome }
                state.waiters[ticket.number] = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Queues `batch` and waits until it is written (``enqueue(_:)`` then ``wait(for:)``).
    nonisolated(nonsending) func write(_ batch: PersistenceBatch) async throws {
        try await wait(for: enqueue(batch))
    }

    /// Waits until every batch queued so far is written, writing again first what
    /// failed writes left out, so that persistence holds all that memory held when it
    /// was called: what a read of persistence must wait for.
    ///
    /// - Throws: the persistence's error if that write fails (a read would then see
    ///   persistence behind memory); ``MomentsStoreError/Code-swift.struct/shutDown`` once
    ///   the writer is closed with a batch left to write.
    nonisolated(nonsending) func catchUp() async throws {
        try await wait(for: enqueue(PersistenceBatch()))
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

    /// Refuses every batch from now on (each waiter of one is told
    /// ``MomentsStoreError/Code-swift.struct/shutDown``); batches queued before go on
    /// being written. Call ``idle()`` after it to wait for them.
    func close() {
        state.withLock { $0.isClosed = true }
    }

    /// Whether a write is queued or running.
    var isBusy: Bool { state.withLock { $0.isWriting } }

    private nonisolated(nonsending) func save(_ batch: PersistenceBatch) async -> Result<Void, any Error> {
        // The clock is read only for a histogram to record into.
        let started = instruments.map { _ in ContinuousClock.now }
        do {
            try await persistence.save(batch)
            if let instruments, let started { instruments.wrote(in: ContinuousClock.now - started, failed: false) }
            return .success(())
        } catch {
            if let instruments, let started { instruments.wrote(in: ContinuousClock.now - started, failed: true) }
            return .failure(error)
        }
    }

    private nonisolated(nonsending) func drain() async {
        while true {
            let next = state.withLock { state -> (WriteQueue, [UInt64])? in
                if state.finishIfNothingQueued() { return nil }
                var write = state.backlog
                write.append(state.pending)
                defer {
                    state.pending = WriteQueue()
                    state.pendingTickets = []
                }
                return (write, state.pendingTickets)
            }
            guard let (write, tickets) = next else { break }
            let (outcome, unsaved) = await write.save { await self.save($0) }
            let waiters = state.withLock { state -> [Waiter] in
                state.record(unsaved: unsaved)
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
