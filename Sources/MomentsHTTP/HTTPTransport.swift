/// Sends one ``HTTPRequest`` and returns the whole answer: the seam between
/// `HTTPClient` and the network.
///
/// Everything above a transport (retries, hedging, the circuit breaker, redirects,
/// caching, decoding) is the client's; a transport sends one exchange. Its duties, all
/// checked for both shipped transports by one conformance suite:
///
/// - **Send exactly the caller's bytes.** The method, URL, header fields in order, and the
///   body: ``HTTPRequest/body`` from memory, or ``HTTPRequest/streamedBody`` read while
///   sent with its length announced. A header field whose value holds CR, LF or NUL, or
///   whose name is not a token, is refused with
///   ``HTTPClientError/Code-swift.struct/invalidRequest`` before anything is sent.
/// - **Send a request that is not repeatable at most once.** A request whose
///   ``HTTPRequest/isRepeatable`` is false goes on a connection no earlier request used,
///   so the transport never finds it stale and sends it again by itself; a failure is
///   reported, and the client decides. A repeatable request sent again (a reused
///   connection the server closed) carries its body from the first byte, or the attempt
///   fails as ``TransportFailure/Kind-swift.struct/connectionReset``; never a
///   `Content-Length` it does not fill. ``TransportFailure/Kind-swift.struct/requestNotSent``
///   is for a failure the transport knows came before any byte left.
/// - **Do not follow redirects.** A 3xx is an answer; the client decides.
/// - **One deadline.** ``HTTPRequest/timeout`` covers the whole exchange, from sending to
///   the last body byte; past it, fail with ``TransportFailure/Kind-swift.struct/timedOut``.
/// - **Size limit.** Refuse an answer whose announced length, or whose bytes so far,
///   exceed ``HTTPRequest/maximumResponseSize``, with
///   ``HTTPClientError/Code-swift.struct/responseTooLarge``, without reading the rest.
///   (The client checks every answer against the same limit, so a transport that reads
///   a whole body first still never hands a larger one on; stopping early spares the
///   memory.)
/// - **Cancellation.** End promptly when the calling task is cancelled, with
///   ``HTTPClientError/Code-swift.struct/cancelled``, and leave nothing in flight.
/// - **Failures are typed.** Every failure is an ``HTTPClientError``
///   (``HTTPClientError/Code-swift.struct/transportFailure`` with the platform's reason,
///   ``HTTPClientError/Code-swift.struct/cancelled``,
///   ``HTTPClientError/Code-swift.struct/responseTooLarge``). A status of 404 or 500 is an
///   answer, not a failure: return it. Decompress what the transport offered to accept
///   (`Content-Encoding`), and never call a body that arrived whole "truncated".
///
/// Two things the client does for every transport, whatever the transport did itself:
///
/// - **Downloads.** With ``HTTPRequest/destination``, a transport may write the body into
///   that file as it arrives and answer with ``HTTPResponse/bodyFile`` set and an empty
///   body (the shipped transports do, so a download is never held in memory); it then
///   creates the file 0600 and removes it when the exchange fails. An answer that comes
///   back in memory is written to the file by the client, under the same rules. The
///   client names a hidden file beside the caller's destination, and moves it over the
///   destination only once the answer is accepted: a failed download never touches it.
/// - **Progress.** `URLSessionTransport` and `CurlTransport` report the bytes sent and
///   received of a `HTTPClient.transfer(_:)` as they go; for a transport that reports
///   none, the client reports the whole exchange when it ends.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse

    /// Ends the transport: what it still has in flight fails, later requests fail
    /// without being sent, and when it returns its threads have ended and its
    /// connections are closed. Idempotent. `HTTPClient.shutdown(gracePeriod:)` calls it
    /// once the client's own requests have ended.
    ///
    /// The default does nothing: for a transport that holds nothing open.
    func shutdown() async
}

extension HTTPTransport {
    /// The default: nothing to end.
    public func shutdown() async {}
}
