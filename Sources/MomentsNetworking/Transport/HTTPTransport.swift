/// Sends one ``HTTPRequest`` and returns the whole answer: the seam between
/// ``HTTPClient`` and the network.
///
/// A transport must honour `request.timeout` as a deadline for the whole exchange and
/// `request.maximumResponseSize`, end promptly when the calling task is cancelled, and
/// report failures as ``HTTPClientError`` (``HTTPClientError/Code-swift.struct/transportFailure``,
/// ``HTTPClientError/Code-swift.struct/cancelled``,
/// ``HTTPClientError/Code-swift.struct/responseTooLarge``). A status of 404 or 500 is an
/// answer, not a failure: return it.
public protocol HTTPTransport: Sendable {
    /// Sends `request` and returns the server's answer.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse
}
