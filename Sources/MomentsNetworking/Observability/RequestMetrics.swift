import Foundation
public import MomentsHTTP

/// What one request cost, handed to the client's metrics handler.
public struct RequestMetrics: Sendable {
    /// The ``Request`` type's name.
    public let requestName: String
    /// The request's method.
    public let method: HTTPMethod
    /// The URL without its query.
    public let url: String
    /// The status of the final answer, if one arrived.
    public let statusCode: Int?
    /// From the call to its result.
    public let duration: Duration
    /// Attempts made on the network (0 when served from the cache).
    public let attempts: Int
    /// Whether the answer came from the cache.
    public let isFromCache: Bool
    /// Bytes of the final answer's body.
    public let responseBytes: Int
    /// The failure, if the request failed.
    public let errorCode: HTTPClientError.Code?
}
