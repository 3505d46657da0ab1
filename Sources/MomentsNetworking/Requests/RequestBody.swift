public import Foundation
package import MomentsHTTP

/// The body of a ``Request``: a value encoded to JSON by the client's encoder, form
/// fields, bytes sent as they are, or a file or `multipart/form-data` form streamed from
/// disk as it is sent (never held whole in memory).
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
        /// A file, streamed.
        case file(URL)
        /// A form whose files are streamed.
        case multipart(MultipartForm)
    }

    let content: Content

    /// The `Content-Type` sent with the body, unless the request sets its own.
    public let contentType: String?

    /// A value encoded with the client's `JSONEncoder`, sent as `application/json`.
    public static func json(_ value: some Encodable & Sendable) -> RequestBody {
        RequestBody(content: .json(value), contentType: "application/json")
    }

    /// `prefix`, then `value` encoded by the client's encoder, then `}`, sent as
    /// `application/json`: a JSON object whose constant members are encoded once.
    package static func jsonObject(prefix: Data, endingWith value: any Encodable & Sendable) -> RequestBody {
        RequestBody(content: .jsonObjectEnding(prefix: prefix, value: value), contentType: "application/json")
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

    /// The file at `url`, read from disk while it is sent. Its length is taken when the
    /// request is built; a file missing or unreadable then fails the request with
    /// `HTTPClientError.Code.invalidRequest` before anything is sent.
    public static func file(_ url: URL, contentType: String? = "application/octet-stream") -> RequestBody {
        RequestBody(content: .file(url), contentType: contentType)
    }

    /// A `multipart/form-data` form; its files are read from disk while it is sent.
    public static func multipart(_ form: MultipartForm) -> RequestBody {
        RequestBody(content: .multipart(form), contentType: form.contentType)
    }

    /// Whether the body is streamed from disk (``file(_:contentType:)``,
    /// ``multipart(_:)``) rather than encoded into memory.
    package var isStreamed: Bool {
        switch content {
        case .file, .multipart: true
        case .json, .data, .jsonObjectEnding: false
        }
    }

    /// The body as the transport streams it, with each file's length taken now; `nil`
    /// for bodies encoded into memory (``encoded(with:)``).
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` when a file cannot
    ///   be read.
    package func streamedBody() throws -> StreamedBody? {
        switch content {
        case .file(let url): StreamedBody([try StreamedBody.file(url)])
        case .multipart(let form): try form.streamedBody()
        case .json, .data, .jsonObjectEnding: nil
        }
    }

    /// The bytes to send. A streamed body is read whole here; the client never does
    /// that, it hands ``streamedBody()`` to the transport.
    package func encoded(with encoder: JSONEncoder) throws -> Data {
        switch content {
        case .json(let value): try encoder.encode(value)
        case .data(let data): data
        case .jsonObjectEnding(let prefix, let value):
            prefix + (try encoder.encode(value)) + Data("}".utf8)
        case .file, .multipart: try streamedBody()?.collected() ?? Data()
        }
    }
}
