/// An HTTP request method.
public enum HTTPMethod: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case get = "GET"
    case post = "POST"
    case put = "PUT"
    case patch = "PATCH"
    case delete = "DELETE"
    case head = "HEAD"

    /// Whether sending the request twice has the same effect as sending it once
    /// (RFC 9110 §9.2.2). Only idempotent requests are retried unless they opt in.
    public var isIdempotent: Bool {
        switch self {
        case .get, .put, .delete, .head: true
        case .post, .patch: false
        }
    }

    /// A one-line description, for logs and messages.
    public var description: String { rawValue }
}
