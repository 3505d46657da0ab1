public import MomentsHTTP
/// A request on its way, with its progress: ``HTTPClient/transfer(_:)``.
///
/// For example:
/// ```swift
/// let upload = client.transfer(UploadVideo(file: video))
/// for await progress in upload.progress {
///     bar.show(progress.sent, of: progress.expectedToSend)
/// }
/// let receipt = try await upload.value
/// ```
public struct Transfer<Value: Sendable>: Sendable {
    /// The progress, newest first for a slow reader; it ends when the transfer does.
    public let progress: AsyncStream<TransferProgress>
    private let task: Task<Value, any Error>

    init(progress: AsyncStream<TransferProgress>, task: Task<Value, any Error>) {
        self.progress = progress
        self.task = task
    }

    /// The answer, as ``HTTPClient/send(_:)`` returns it. Cancelling the task that waits
    /// here cancels the transfer.
    ///
    /// - Throws: what ``HTTPClient/send(_:)`` throws.
    public var value: Value {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// Cancels the transfer; ``value`` then throws
    /// `HTTPClientError.Code.cancelled`.
    public func cancel() {
        task.cancel()
    }
}

extension HTTPClient {
    /// Sends `request` as ``send(_:)`` does, reporting the bytes sent and received as
    /// they go (uploads and downloads alike).
    ///
    /// The transfer starts at once, in a task of its own; its progress arrives on
    /// ``Transfer/progress`` and its answer on ``Transfer/value``.
    public nonisolated func transfer<R: Request>(_ request: R) -> Transfer<R.Response> {
        let reporter = TransferProgressReporter()
        let task = Task {
            defer { reporter.finish() }
            return try await TransferProgressReporter.$current.withValue(reporter) {
                try await self.send(request)
            }
        }
        return Transfer(progress: reporter.updates, task: task)
    }
}
