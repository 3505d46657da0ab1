/// The one check every header field passes before it is sent, whatever the transport:
/// a name is a token of RFC 9110 §5.1 (no space, colon or control character), and a
/// value holds no CR, LF or NUL (§5.5), which could end the field early or smuggle
/// another one in.
package enum HeaderValidation {
    /// The first field of `headers` that breaks the rule, described for an error
    /// message (its name only: a value may be a secret), or `nil` when all are valid.
    package static func firstInvalidField(in headers: HTTPHeaders) -> String? {
        for field in headers where !isValidName(field.name) || !isValidValue(field.value) {
            return isValidName(field.name) ? field.name.debugDescription : "named \(field.name.debugDescription)"
        }
        return nil
    }

    /// Whether `name` is a token: visible ASCII, none of `"(),/:;<=>?@[\]{}`.
    package static func isValidName(_ name: String) -> Bool {
        guard !name.isEmpty else { return false }
        for byte in name.utf8 {
            guard byte > 0x20, byte < 0x7F else { return false }
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: ","), UInt8(ascii: "/"),
                 UInt8(ascii: ":"), UInt8(ascii: ";"), UInt8(ascii: "<"), UInt8(ascii: "="), UInt8(ascii: ">"),
                 UInt8(ascii: "?"), UInt8(ascii: "@"), UInt8(ascii: "["), UInt8(ascii: "\\"), UInt8(ascii: "]"),
                 UInt8(ascii: "{"), UInt8(ascii: "}"):
                return false
            default: continue
            }
        }
        return true
    }

    /// Whether `value` holds no CR, LF or NUL.
    package static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}
