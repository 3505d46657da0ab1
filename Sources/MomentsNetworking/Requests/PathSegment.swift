/// Percent-encoding for values placed into a URL path.
///
/// An identifier placed into a path must stay one segment: `../admin?x=1` becomes
/// `..%2Fadmin%3Fx=1`, and `..` or `.` alone become `%2E%2E` and `%2E`, so no value can
/// climb out of its segment, start a query or a fragment.
///
/// For example:
/// ```swift
/// var path: String { "/users/\(segment: userID)/moments" }
/// ```
public enum PathSegment {
    /// Bytes allowed unescaped in a path segment (RFC 3986 `pchar` without `/`, `;`).
    private static let allowed: Set<UInt8> = {
        var bytes = Set<UInt8>()
        for scalar in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,=:@".utf8 {
            bytes.insert(scalar)
        }
        return bytes
    }()

    /// Returns `value` percent-encoded so that it is exactly one path segment.
    package static func encode(_ value: String) -> String {
        if value == "." { return "%2E" }
        if value == ".." { return "%2E%2E" }
        var encoded = ""
        encoded.reserveCapacity(value.utf8.count)
        for byte in value.utf8 {
            if allowed.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0F)
            }
        }
        return encoded
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(UnicodeScalar(nibble < 10 ? 48 + nibble : 55 + nibble))
    }
}

extension DefaultStringInterpolation {
    /// Interpolates `value` percent-encoded as one URL path segment.
    ///
    /// `"/users/\(segment: "a/b")"` is `"/users/a%2Fb"`.
    public mutating func appendInterpolation(segment value: String) {
        appendLiteral(PathSegment.encode(value))
    }
}
