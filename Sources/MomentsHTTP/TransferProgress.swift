import MomentsSupport

/// How far one transfer has come: bytes sent and received so far, and how many are
/// expected when the length is known.
///
/// The counts are the current attempt's: a request the client retries or redirects
/// starts them again.
public struct TransferProgress: Sendable, Hashable {
    /// Body bytes sent so far.
    public var sent: Int64
    /// The request body's length; `nil` when unknown, 0 for no body.
    public var expectedToSend: Int64?
    /// Body bytes received so far (decoded, when the answer is compressed).
    public var received: Int64
    /// The answer's announced length; `nil` when the server did not announce one (or
    /// announced the compressed length of a body that arrives decoded).
    public var expectedToReceive: Int64?

    /// Progress of `sent` of `expectedToSend` and `received` of `expectedToReceive` bytes.
    public init(sent: Int64 = 0, expectedToSend: Int64? = nil, received: Int64 = 0, expectedToReceive: Int64? = nil) {
        self.sent = sent
        self.expectedToSend = expectedToSend
        self.received = received
        self.expectedToReceive = expectedToReceive
    }
}

/// Where a transport reports a transfer's progress: the ``TransferProgress`` stream of
/// `HTTPClient.transfer(_:)`.
///
/// A transport reads ``current`` when it starts sending a request and, if there is one,
/// reports what it sends and receives; `URLSessionTransport` and `CurlTransport` do.
/// The stream keeps only the newest progress for a slow reader.
package final class TransferProgressReporter: Sendable {
    /// The reporter of the transfer the calling task performs, if it reports progress.
    @TaskLocal package static var current: TransferProgressReporter?

    private let state = PThreadMutex(TransferProgress())
    private let continuation: AsyncStream<TransferProgress>.Continuation
    /// The progress, newest first for a slow reader; it ends with the transfer.
    package let updates: AsyncStream<TransferProgress>

    /// A reporter whose ``updates`` nobody reads yet.
    package init() {
        (updates, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// A new attempt begins: `expectedToSend` body bytes (nil when unknown), none sent
    /// or received yet.
    package func begin(expectedToSend: Int64?) {
        publish { $0 = TransferProgress(expectedToSend: expectedToSend) }
    }

    /// `count` body bytes have been sent in all (of `expected`, if it is known now).
    package func sent(_ count: Int64, of expected: Int64? = nil) {
        publish { progress in
            progress.sent = count
            if let expected { progress.expectedToSend = expected }
        }
    }

    /// `count` body bytes have been received in all (of `expected`, if announced).
    package func received(_ count: Int64, of expected: Int64?) {
        publish { progress in
            progress.received = count
            progress.expectedToReceive = expected
        }
    }

    /// An attempt's exchange has ended with `sent` and `received` body bytes: counts the
    /// transport did not report (it need not) are reported now, whole.
    package func exchangeEnded(sent: Int64, received: Int64) {
        publish { progress in
            if progress.sent == 0, sent > 0 { progress.sent = sent }
            if progress.received == 0, received > 0 {
                progress.received = received
                progress.expectedToReceive = received
            }
        }
    }

    /// The newest progress.
    package var progress: TransferProgress { state.withLock { $0 } }

    /// Ends ``updates``: the transfer is over.
    package func finish() {
        continuation.finish()
    }

    /// Yields under the lock, so concurrent reports reach the stream in the order they
    /// changed the progress (no `onTermination` takes this lock).
    private func publish(_ change: (inout TransferProgress) -> Void) {
        state.withLock { progress in
            let before = progress
            change(&progress)
            if progress != before { continuation.yield(progress) }
        }
    }
}
