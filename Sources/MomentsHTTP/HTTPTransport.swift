/// Sends one ``HTTPRequest`` and returns the whole answer: the seam between
/// `HTTPClient` and the network.
///
/// Everything above a transport (retries, hedging, the circuit breaker, redirects,
/// caching, decoding) is the client's; a transport sends one exchange. Its duties, all
/// checked for both shipped transports by one conformance suite:
///
/// - **Send exactly the caller's bytes.** The method, URL, header fields in order, and the
///   body: ``HTTPRequest/body`` from memory, or ``HTTPRequest/streamedBody`` read while
///   sent with its length announced. If the request must be sent again (a reused
///   connection the server closed), the body goes again from its first byte, or the
///   attempt fails as ``TransportFailure/Kind-swift.struct/requestNotSent``; never a
///   `Content-Length` it does not fill. A header value with a line break is refused
///   before anything is sent.
/// - **Do not follow redirects.** A 3xx is an answer; the client decides.
/// - **One deadline.** ``HTTPRequest/timeout`` covers the whole exchange, from sending to
///   the last body byte; past it, fail with ``TransportFailure/Kind-swift.struct/timedOut``.
/// - **Size limit.** Refuse an answer whose announced length, or whose bytes so far,
///   exceed ``HTTPRequest/maximumResponseSize``, with
///   ``HTTPClientError/Code-swift.struct/responseTooLarge``, without reading the rest.
/// - **Downloads.** With ``HTTPRequest/destination``, write the body into that file as it
///   arrives (created 0600), answer with ``HTTPResponse/bodyFile`` and an empty body, and
///   remove the file when the exchange fails.
/// - **Progress** (optional). `URLSessionTransport` and `CurlTransport` report the bytes
///   sent and received of a `HTTPClient.transfer(_:)`; a transport of your own need
///   not, and its transfers then report no progress before their answer.
/// - **Cancellation.** End promptly when the calling task is cancelled, with
///   ``HTTPClientError/Code-swift.struct/cancelled``, and leave nothing in flight.
/// - **Failures are typed.** Every failure is an ``HTTPClientError``
///   (``HTTPClientError/Code-swift.struct/transportFailure`` with the platform's reason,
///   ``HTTPClientError/Code-swift.struct/cancelled``,
///   ``HTTPClientError/Code-swift.struct/responseTooLarge``). A status of 404 or 500 is an
///   answer, not a failure: return it. Decompress what the transport offered to accept
///   (`Content-Encoding`), and never call a body that arrived whole "truncated".
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
