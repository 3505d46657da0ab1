import MomentsSupport
import Foundation
package import MomentsHTTP

/// Identifies a cached answer: a SHA-256 of the method, the URL, the body and the
/// identity of the credentials sent (a keyed digest; see
/// ``HTTPClient/Configuration-swift.struct/identityHeaders``), the same in every process
/// sharing the cache and across restarts. Requests sent with different credentials
/// never share an answer.
public struct CacheKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// 64 lowercase hex digits.
    public let rawValue: String

    /// A key from its stored spelling.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The key of `request` sent without credentials.
    package init(_ request: HTTPRequest) {
        self.init(request, identity: .anonymous)
    }

    /// The key of `request` sent with the credentials `identity` names.
    init(_ request: HTTPRequest, identity: RequestIdentity) {
        var bytes = Array(request.method.rawValue.utf8)
        bytes.append(0x0A)
        bytes += Array(request.url.absoluteString.utf8)
        bytes.append(0x0A)
        if let body = request.body { bytes += Array(body) }
        if !identity.digest.isEmpty {
            bytes.append(0x0A)
            bytes += Array(identity.digest.utf8)
        }
        rawValue = SHA256.hexDigest(bytes)
    }

    /// A one-line description, for logs and messages.
    public var description: String { rawValue }
}
