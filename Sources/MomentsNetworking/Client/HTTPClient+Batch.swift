import MomentsSupport
public import MomentsHTTP

extension HTTPClient {
    /// Sends `requests` in parallel, at most `maximumConcurrency` at a time, and returns
    /// their answers in order. The first failure cancels the rest and is thrown.
    ///
    /// ```swift
    /// let timelines = try await client.sendAll(userIDs.map { GetMomentsByUserID(userID: $0) }, maximumConcurrency: 8)
    /// ```
    public nonisolated func sendAll<R: Request>(_ requests: [R], maximumConcurrency: Int = 8) async throws -> [R.Response] {
        let results = try await runBatch(requests, maximumConcurrency: maximumConcurrency, failFast: true)
        return try results.map { try $0.get() }
    }

    /// Sends `requests` in parallel, at most `maximumConcurrency` at a time, and returns
    /// every outcome in order, successes and failures alike.
    public nonisolated func sendAllSettled<R: Request>(
        _ requests: [R], maximumConcurrency: Int = 8
    ) async -> [Result<R.Response, HTTPClientError>] {
        (try? await runBatch(requests, maximumConcurrency: maximumConcurrency, failFast: false)) ?? []
    }

    private nonisolated func runBatch<R: Request>(
        _ requests: [R], maximumConcurrency: Int, failFast: Bool
    ) async throws -> [Result<R.Response, HTTPClientError>] {
        var results = [Result<R.Response, HTTPClientError>?](repeating: nil, count: requests.count)
        try await withThrowingTaskGroup(of: (Int, Result<R.Response, HTTPClientError>).self) { group in
            var next = 0
            func addNext() {
                guard next < requests.count else { return }
                let index = next
                let request = requests[index]
                next += 1
                group.addTask {
                    do {
                        return (index, .success(try await self.send(request)))
                    } catch {
                        return (index, .failure(error as? HTTPClientError ?? .cancelled()))
                    }
                }
            }
            for _ in 0..<max(1, maximumConcurrency) { addNext() }
            while let (index, result) = try await group.next() {
                if failFast, case .failure(let error) = result {
                    group.cancelAll()
                    throw error
                }
                results[index] = result
                addNext()
            }
        }
        return results.map { $0 ?? .failure(.cancelled()) }
    }

    /// Sends requests of different types in parallel and returns their typed answers.
    /// The first failure cancels the others and is thrown.
    ///
    /// ```swift
    /// let (user, timeline) = try await client.sendAll(GetUser(id: "0"), GetMomentsByUserID(userID: "0"))
    /// ```
    public nonisolated func sendAll<each R: Request>(_ requests: repeat each R) async throws -> (repeat (each R).Response) {
        let siblings = CancellationGroup()
        let tasks = (repeat siblings.track(Task {
            do {
                return try await self.send(each requests)
            } catch {
                siblings.fail(with: error)
                throw error
            }
        }))
        return try await withTaskCancellationHandler {
            do {
                return (repeat try await (each tasks).value)
            } catch {
                siblings.cancelAll()
                // Report the failure that stopped the batch, not a sibling's cancellation.
                throw siblings.firstFailure ?? error
            }
        } onCancel: {
            siblings.cancelAll()
        }
    }
}

/// Cancels sibling tasks together and remembers which failure came first.
final class CancellationGroup: Sendable {
    private struct State {
        var cancellers: [@Sendable () -> Void] = []
        var cancelled = false
        var firstFailure: (any Error)?
    }

    private let state = PThreadMutex(State())

    func track<T: Sendable>(_ task: Task<T, any Error>) -> Task<T, any Error> {
        let cancelNow = state.withLock { state -> Bool in
            state.cancellers.append { task.cancel() }
            return state.cancelled
        }
        if cancelNow { task.cancel() }
        return task
    }

    func cancelAll() {
        let cancellers = state.withLock { state -> [@Sendable () -> Void] in
            state.cancelled = true
            return state.cancellers
        }
        for cancel in cancellers { cancel() }
    }

    /// Records `error` if it is the first real failure (not a cancellation), then
    /// cancels every sibling.
    func fail(with error: any Error) {
        let isCancellation = (error as? HTTPClientError)?.code == .cancelled || error is CancellationError
        state.withLock { state in
            if state.firstFailure == nil, !isCancellation { state.firstFailure = error }
        }
        cancelAll()
    }

    /// The first real failure, if any.
    var firstFailure: (any Error)? { state.withLock { $0.firstFailure } }
}
