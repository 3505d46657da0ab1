public import Foundation
import MomentsSupport
public import MomentsHTTP

/// An answer kept in a ``ResponseCache``.
public struct CachedResponse: Sendable, Hashable, Codable {
    /// The status of the answer.
    public var statusCode: Int
    /// The header fields of the answer, in order.
    public var headers: [HTTPHeaders.Field]
    /// The body of the answer.
    public var body: Data
    /// When it was stored.
    public var storedAt: Date
    /// When it stops being fresh.
    public var expiresAt: Date

    /// `response` as stored at `storedAt`, fresh for `timeToLive`.
    public init(_ response: HTTPResponse, storedAt: Date = Date(), timeToLive: Duration) {
        statusCode = response.statusCode
        headers = Array(response.headers)
        body = response.body
        self.storedAt = storedAt
        expiresAt = storedAt.addingTimeInterval(timeToLive.seconds)
    }

    /// The answer as the transport gave it.
    public var response: HTTPResponse {
        HTTPResponse(statusCode: statusCode, headers: HTTPHeaders(headers.map { ($0.name, $0.value) }), body: body)
    }

    /// Whether it is still fresh at `date`.
    package func isFresh(at date: Date = Date()) -> Bool { date < expiresAt }

    /// Its age at `date`.
    package func age(at date: Date = Date()) -> TimeInterval { date.timeIntervalSince(storedAt) }

    /// The bytes it costs to keep.
    package var cost: Int { body.count + headers.reduce(64) { $0 + $1.name.utf8.count + $1.value.utf8.count } }
}

