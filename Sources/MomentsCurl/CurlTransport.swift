public import MomentsHTTP

/// An `HTTPTransport` on libcurl's multi interface, for servers that outgrow
/// `URLSessionTransport`: one event-loop thread per transport drives every request,
/// reusing connections, speaking HTTP/1.1 or HTTP/2 over TLS, with the trust, identity,
/// proxy and connection controls a production service needs (see ``Configuration``).
///
/// It keeps the same contract as `URLSessionTransport`:
/// - each request's `timeout` is a deadline for the whole exchange, to the millisecond;
/// - cancelling the calling task answers it at once with
///   `.cancelled`; the network work is abandoned on the
///   loop's thread, so the cancelling thread never waits;
/// - `maximumResponseSize` is enforced while the body streams in (and up front when the
///   answer announces a longer `Content-Length`), on the decoded bytes;
/// - a body shorter than its `Content-Length` is a
///   `.truncatedResponse`, compressed or not;
/// - redirects are never followed here: the 3xx answer goes back to `HTTPClient`, whose
///   `RedirectPolicy` decides;
/// - failures carry libcurl's own message, and a ``CurlError`` underneath;
/// - nothing is shared with another transport (no cookies are kept at all), so tenants
///   with separate transports share no connection, cache or state.
///
/// Create one transport per process (or per tenant) and keep it: its connections are
/// reused for its whole life. Its thread ends at ``shutdown()``, or when the transport is released.
public final class CurlTransport: HTTPTransport {
    private let loop: CurlEventLoop
    private let bodyMemory: BodyMemoryPool?

    /// Creates a transport with its own multi handle and event-loop thread.
    ///
    /// - Throws: `.transportFailure` when libcurl
    ///   cannot be initialized.
    public init(configuration: Configuration = Configuration()) throws {
        guard let loop = CurlEventLoop(configuration: configuration) else {
            throw HTTPClientError.transportFailure(TransportFailure(kind: .other, message: "libcurl could not be initialized"))
        }
        self.loop = loop
        bodyMemory = configuration.reusableBodyMemory > 0 ? BodyMemoryPool(idleLimit: configuration.reusableBodyMemory) : nil
    }

    deinit {
        loop.stop()
    }

    /// Ends the transport: requests still in flight fail as cancelled, later ones fail
    /// at once without being sent, and when it returns the event loop's thread has
    /// ended and every connection is closed. Idempotent. `HTTPClient/shutdown(gracePeriod:)`
    /// calls it once its own requests have ended.
    public func shutdown() async {
        await loop.stopAndWait()
    }

    /// Whether the event loop's thread has ended (after ``shutdown()``), for tests.
    package var hasEnded: Bool { loop.hasEnded }

    /// The requests this transport has submitted and not yet answered (for diagnostics
    /// and leak checks). A cancelled request counts until its loop has let it go.
    public var requestsInFlight: Int { loop.requestsInFlight }

    /// Sends `request` through the event loop and returns the whole answer; see the
    /// type's documentation for the contract.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let progress = TransferProgressReporter.current
        progress?.begin(expectedToSend: request.bodyLength)
        let transfer = CurlTransfer(request: request, progress: progress, bodyMemory: bodyMemory)
        let loop = self.loop
        let answer = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if transfer.start(continuation) { loop.submit(transfer) }
            }
        } onCancel: {
            if transfer.finish(.failure(.cancelled())) { loop.cancel(transfer) }
        }
        // The header fields become strings here, on the caller's thread, not the loop's.
        return answer.response
    }
}
