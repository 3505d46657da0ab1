import Foundation
import Synchronization

/// Identifies identical requests exactly: same method, URL and body bytes.
struct CoalescingKey: Hashable, Sendable {
    let method: HTTPMethod
    let url: URL
    let body: Data?

    init(_ request: HTTPRequest) {
        method = request.method
        url = request.url
        body = request.body
    }
}

/// Lets identical requests in flight share one network exchange.
///
/// Each caller waits on its own continuation: a caller that is cancelled stops waiting
/// at once without disturbing the others; the shared exchange is cancelled only when
/// every caller has gone.
final class Coalescer<Value: Sendable>: Sendable {
    private typealias Waiter = CheckedContinuation<Value, any Error>

    private struct Flight {
        var task: Task<Void, Never>?
        var waiters: [Int: Waiter]
        let generation: Int
    }

    private struct State {
        var nextID = 0
        var flights: [CoalescingKey: Flight] = [:]
    }

    private let state = Mutex(State())

    /// Runs `operation` for `key`, or joins the run already in flight.
    func run(
        _ key: CoalescingKey,
        operation: @escaping @Sendable () async throws -> Value
    ) async throws -> Value {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                let cancelledEarly = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[id] = continuation
                        return false
                    }
                    let generation = id
                    state.flights[key] = Flight(task: nil, waiters: [id: continuation], generation: generation)
                    state.flights[key]?.task = Task { [weak self] in
                        let result: Result<Value, any Error>
                        do { result = .success(try await operation()) } catch { result = .failure(error) }
                        self?.finish(key, generation: generation, with: result)
                    }
                    return false
                }
                if cancelledEarly { continuation.resume(throwing: HTTPClientError.cancelled()) }
            }
        } onCancel: {
            leave(key, waiter: id)
        }
    }

    private func finish(_ key: CoalescingKey, generation: Int, with result: Result<Value, any Error>) {
        let waiters = state.withLock { state -> [Waiter] in
            guard let flight = state.flights[key], flight.generation == generation else { return [] }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func leave(_ key: CoalescingKey, waiter id: Int) {
        let (waiter, abandoned) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
            guard let waiter = state.flights[key]?.waiters.removeValue(forKey: id) else { return (nil, nil) }
            guard state.flights[key]?.waiters.isEmpty == true else { return (waiter, nil) }
            let task = state.flights[key]?.task
            state.flights[key] = nil
            return (waiter, task)
        }
        waiter?.resume(throwing: HTTPClientError.cancelled())
        abandoned?.cancel()
    }
}
