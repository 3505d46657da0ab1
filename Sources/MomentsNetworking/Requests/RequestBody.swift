public import Foundation

/// The body of a ``Request``: a value encoded to JSON by the client's encoder, form
/// fields, or bytes sent as they are.
///
/// For example:
/// ```swift
/// var body: RequestBody? { .json(Credentials(user: "ada", password: secret)) }
/// ```
public struct RequestBody: Sendable {
    enum Content: Sendable {
        case json(any Encodable & Sendable)
        case data(Data)
        /// `prefix`, then `value` encoded by the client's encoder, then `}`: a JSON object
        /// whose constant members are encoded once (a GraphQL document).
        case jsonObjectEnding(prefix: Data, value: any Encodable & Sendable)
    }

    let content: Content

    /// The `Content-Type` sent with the body, unless the request sets its own.
    public let contentType: String?

    /// A value encoded with the client's `JSONEncoder`, sent as `application/json`.
    public static func json(_ value: some Encodable & Sendable) -> RequestBody {
        RequestBody(content: .json(value), contentType: "application/json")
    }

    /// Fields sent as an HTML form, `application/x-www-form-urlencoded`: names and
    /// values percent-encoded (a space as `+`), pairs joined with `&`, in order.
    public static func formURLEncoded(_ fields: [(name: String, value: String)]) -> RequestBody {
        let body = fields.map { formEncode($0.name) + "=" + formEncode($0.value) }.joined(separator: "&")
        return RequestBody(content: .data(Data(body.utf8)), contentType: "application/x-www-form-urlencoded")
    }

    /// The form encoding of `text`: ASCII letters, digits and `*-._` as they are, a space
    /// as `+`, every other byte of its UTF-8 as `%XX`.
    static func formEncode(_ text: String) -> String {
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                encoded += "+"
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                encoded += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return encoded
    }

    /// Bytes sent as they are.
    public static func data(_ data: Data, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(content: .data(data), contentType: contentType)
    }

    /// The bytes to send.
    public func encoded(with encoder: JSONEncoder) throws -> Data {
        switch content {
        case .json(let value): try encoder.encode(value)
        case .data(let data): data
        case .jsonObjectEnding(let prefix, let value):
            prefix + (try encoder.encode(value)) + Data("}".utf8)
        }
    }
}
