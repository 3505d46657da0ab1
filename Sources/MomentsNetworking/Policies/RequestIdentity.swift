import Foundation
import MomentsSupport
import MomentsHTTP

/// Who a request speaks for: the values of its identity headers, as a keyed digest.
///
/// Identity headers are `Authorization`, `Cookie`, `Proxy-Authorization`, those named in
/// ``HTTPClient/Configuration-swift.struct/identityHeaders``, the authentication
/// middleware's header, and any header whose name looks like a credential (see
/// `HTTPHeaders.isSensitive(_:)`). Two requests share an answer, from the cache or
/// from one exchange in flight, only if their identities are equal. The digest is an
/// HMAC-SHA-256 under a key of the cache (or of the client), so a key on disk never
/// reveals a credential and cannot be checked against guesses without that key.
struct RequestIdentity: Hashable, Sendable {
    /// The digest; empty for a request that carries no identity header.
    let digest: String

    static let anonymous = RequestIdentity(digest: "")

    private init(digest: String) { self.digest = digest }

    /// The identity of `headers` under `key`.
    init(_ headers: HTTPHeaders, names: IdentityHeaderNames, key: [UInt8]) {
        var message: [UInt8] = []
        for field in headers where names.contains(field.name) {
            message += Array(field.name.lowercased().utf8)
            message.append(0x3A)
            message += Array(field.value.utf8)
            message.append(0x0A)
        }
        digest = message.isEmpty ? "" : SHA256.hmacHex(key: key, message: message)
    }
}

/// The names of the headers that carry identity, compared without case.
struct IdentityHeaderNames: Sendable {
    private let names: Set<String>
    /// Whether a name in `names` is not already sensitive by its own words.
    private let hasConfiguredNames: Bool

    init(configured: [String], authenticationHeader: String?) {
        var names = Set(["authorization", "cookie", "proxy-authorization"])
        for name in configured { names.insert(name.lowercased()) }
        if let authenticationHeader { names.insert(authenticationHeader.lowercased()) }
        self.names = names
        self.hasConfiguredNames = names.contains { !HTTPHeaders.isSensitive($0) }
    }

    func contains(_ name: String) -> Bool {
        // Every name the set holds by default is sensitive: only configured ones need the set.
        HTTPHeaders.isSensitive(name) || (hasConfiguredNames && names.contains(name.lowercased()))
    }
}

/// The credential values a call's requests sent, collected as each is sent, so that
/// nothing the SDK reports about that call (error descriptions, GraphQL messages, body
/// excerpts, log fields) repeats them, whatever the server echoes back.
///
/// A value: the call's ``CallRecord`` keeps it under its own lock, and what is reported
/// once the call has ended reads a copy.
struct SentSecrets: Sendable {
    /// Longest first, so a whole value goes before the token inside it.
    private var values: [String] = []

    /// The identity header values of `headers`: each whole value, the part after an
    /// authentication scheme (`Bearer <token>`), and each cookie's value.
    static func values(in headers: HTTPHeaders, names: IdentityHeaderNames) -> [String] {
        var found: [String] = []
        for field in headers where names.contains(field.name) {
            let value = field.value.trimmingSpaces
            guard !value.isEmpty else { continue }
            found.append(value)
            if let space = value.firstIndex(of: " ") {
                let credential = String(value[value.index(after: space)...]).trimmingSpaces
                if credential.count >= 4 { found.append(credential) }
            }
            // Cookies: each value of `name=value; name2=value2`.
            for pair in value.split(separator: ";") {
                if let equals = pair.firstIndex(of: "=") {
                    let cookie = String(pair[pair.index(after: equals)...]).trimmingSpaces
                    if cookie.count >= 4 { found.append(cookie) }
                }
            }
        }
        return found
    }

    /// Adds `found` (from ``values(in:names:)``), each value once.
    mutating func add(_ found: [String]) {
        for value in found where !values.contains(value) { values.append(value) }
        values.sort { $0.count > $1.count }
    }

    var isEmpty: Bool { values.isEmpty }

    /// `text` with every collected value replaced by `<redacted>`.
    func redact(_ text: String) -> String {
        guard !values.isEmpty else { return text }
        var text = text
        for secret in values where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return text
    }
}

extension String {
    fileprivate var trimmingSpaces: String {
        var slice = Substring(self)
        while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
        while slice.last == " " || slice.last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
