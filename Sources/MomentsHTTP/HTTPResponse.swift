public import Foundation

/// A response as a transport received it: status, header fields and the whole body.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code.
    public var statusCode: Int
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// The whole body (empty when it was written to ``bodyFile``).
    public var body: Data
    /// The protocol version the exchange used, when the transport knows it
    /// (`CurlTransport` does; `URLSessionTransport` on Linux does not, and leaves `nil`).
    public var httpVersion: HTTPVersion?
    /// The file the body was written to, for a request with a
    /// ``HTTPRequest/destination`` (``body`` is then empty).
    public var bodyFile: URL?

    /// Creates a response; `httpVersion` is `nil` unless the transport knows it.
    public init(statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), httpVersion: HTTPVersion? = nil, bodyFile: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.httpVersion = httpVersion
        self.bodyFile = bodyFile
    }

    /// The first characters of the body as text, for error messages and logs.
    /// Bytes that are not valid UTF-8 are replaced.
    package func bodyExcerpt(limit: Int = 512) -> String {
        BodyExcerpt.make(body, limit: limit)
    }
}

enum BodyExcerpt {
    static func make(_ body: Data, limit: Int) -> String {
        guard !body.isEmpty else { return "" }
        let prefix = body.prefix(limit)
        let text = String(decoding: prefix, as: UTF8.self)
        return body.count > limit ? text + "… (\(body.count) bytes)" : text
    }
}
