import MomentsSupport
import MomentsHTTP

/// At most `limit` exchanges at once; when full, waiting requests are admitted by
/// priority, then in arrival order, at most `maximumQueued` of them (beyond, a request
/// fails at once with `HTTPClientError.Code.overloaded`). Waiting is
/// cancellable, and ends with a `timedOut` failure at the request's deadline.
final class ConcurrencyLimiter: Sendable {
    private struct Waiter {
        let id: Int
        let priority: RequestPriority
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var running = 0
        var nextID = 0
        var waiters: [Waiter] = []
    }

    let limit: Int
    let maximumQueued: Int
    private let state = PThreadMutex(State())

    init(limit: Int, maximumQueued: Int = .max) {
        self.limit = max(1, limit)
        self.maximumQueued = max(0, maximumQueued)
    }

    /// Takes a slot, waiting for one (until `deadline`) if all are taken; a cancelled
    /// task takes none.
    func acquire(priority: RequestPriority, deadline: ContinuousClock.Instant? = nil) async throws {
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        let admitted = state.withLock { state -> Bool in
            guard state.running < limit else { return false }
            state.running += 1
            return true
        }
        if admitted { return }
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(HTTPClientError.cancelled()) }
                    if state.running < limit {
                        state.running += 1
                        return .success(())
                    }
                    if state.waiters.count >= maximumQueued { return .failure(HTTPClientError.overloaded(queued: state.waiters.count)) }
                    // Behind every waiter of the same or higher priority.
                    let index = state.waiters.firstIndex { $0.priority < priority } ?? state.waiters.endIndex
                    state.waiters.insert(Waiter(id: id, priority: priority, continuation: continuation), at: index)
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                } else if let deadline {
                    // The wait ends at the call's deadline, if no slot came first.
                    Task { [weak self] in
                        try? await Task.sleep(until: deadline, clock: .continuous)
                        self?.abandon(id, with: .transportFailure(TransportFailure(
                            kind: .timedOut, message: "the call's deadline passed while it waited for one of \(self?.limit ?? 0) slots"
                        )))
                    }
                }
            }
        } onCancel: {
            abandon(id, with: .cancelled())
        }
    }

    /// Ends waiter `id`'s wait with `error`, if it still waits.
    private func abandon(_ id: Int, with error: HTTPClientError) {
        let waiter = state.withLock { state -> Waiter? in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.waiters.remove(at: index)
        }
        waiter?.continuation.resume(throwing: error)
    }

    func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiters.removeFirst()  // the slot passes to it
        }
        next?.continuation.resume()
    }
}
