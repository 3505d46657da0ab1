import MomentsSupport
import Foundation

/// Identifies a cached answer: a SHA-256 of the method, the URL and the body, the same
/// in every process and across restarts.
///
/// Credentials are not part of the key: an answer that depends on who asks must name
/// the user in its URL or body (as the Moments operations do).
public struct CacheKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// 64 lowercase hex digits.
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// The key of `request`.
    public init(_ request: HTTPRequest) {
        var bytes = Array(request.method.rawValue.utf8)
        bytes.append(0x0A)
        bytes += Array(request.url.absoluteString.utf8)
        bytes.append(0x0A)
        if let body = request.body { bytes += Array(body) }
        rawValue = SHA256.hexDigest(bytes)
    }

    public var description: String { rawValue }
}
