public import Foundation
public import MomentsHTTP

/// A decoded value together with what is known about the answer it came from.
public struct DecodedResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public let value: Value
    /// The HTTP status of the answer.
    public let statusCode: Int
    /// The header fields of the answer.
    public let headers: HTTPHeaders
    /// The raw bytes of the answer, as decoded into ``value`` (JSON and model together).
    public let body: Data
    /// The time from sending the request to decoding the answer, measured with a clock.
    public let duration: Duration
    /// Whether the value came from a cache rather than the network.
    public let isFromCache: Bool
    /// When the network exchange that produced the answer began (for an exchange shared
    /// by identical requests in flight, when the first of them began it; for a retried
    /// request, when its first attempt began); `nil` for an answer from the cache. The
    /// server computed the answer after this instant.
    public let sentAt: ContinuousClock.Instant?
    /// The protocol version of the exchange, when the transport reports it (see
    /// `HTTPResponse.httpVersion`); `nil` for an answer from the cache.
    public let httpVersion: HTTPVersion?

    /// Creates a decoded response.
    package init(
        value: Value, statusCode: Int, headers: HTTPHeaders, body: Data = Data(), duration: Duration,
        isFromCache: Bool = false, sentAt: ContinuousClock.Instant? = nil, httpVersion: HTTPVersion? = nil
    ) {
        self.httpVersion = httpVersion
        self.value = value
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.duration = duration
        self.isFromCache = isFromCache
        self.sentAt = sentAt
    }
}
