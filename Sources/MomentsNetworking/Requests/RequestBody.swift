public import Foundation

/// The body of a ``Request``: a value encoded to JSON by the client's encoder, or bytes
/// sent as they are.
///
/// For example:
/// ```swift
/// var body: RequestBody? { .json(Credentials(user: "ada", password: secret)) }
/// ```
public struct RequestBody: Sendable {
    enum Content: Sendable {
        case json(any Encodable & Sendable)
        case data(Data)
    }

    let content: Content

    /// The `Content-Type` sent with the body, unless the request sets its own.
    public let contentType: String?

    /// A value encoded with the client's `JSONEncoder`, sent as `application/json`.
    public static func json(_ value: some Encodable & Sendable) -> RequestBody {
        RequestBody(content: .json(value), contentType: "application/json")
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
        }
    }
}
