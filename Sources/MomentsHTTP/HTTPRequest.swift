public import Foundation

/// A request as a transport sends it: a method, an absolute URL, header fields, body
/// bytes (or a body to stream), and the limits the transport must enforce.
///
/// `HTTPClient` builds one from each `Request` it sends; an ``HTTPTransport`` sees
/// nothing else.
public struct HTTPRequest: Sendable, Hashable {
    /// The method.
    public var method: HTTPMethod
    /// The absolute URL.
    public var url: URL
    /// The header fields, in order.
    public var headers: HTTPHeaders
    /// The body, held in memory.
    public var body: Data?
    /// A body to read while it is sent (files), instead of ``body``; the transport
    /// announces its length and never holds it whole.
    public var streamedBody: StreamedBody?
    /// The deadline for the whole exchange, from sending to the last body byte.
    public var timeout: Duration
    /// The largest response body the transport may accept, in bytes; `nil` for no limit.
    public var maximumResponseSize: Int?
    /// The body's length in bytes, held or streamed (0 for none).
    public var bodyLength: Int64 { streamedBody?.length ?? Int64(body?.count ?? 0) }
    /// A file to write the response body into as it arrives, instead of memory: the
    /// transport creates it (0600, or truncates it), removes it when the exchange fails,
    /// and answers with ``HTTPResponse/bodyFile`` set and an empty ``HTTPResponse/body``.
    public var destination: URL?
    /// Whether the request may reach the server more than once: its method is idempotent
    /// (RFC 9110 §9.2.2), or its sender declared it safe to repeat.
    ///
    /// A transport never sends a request that is not repeatable a second time by itself:
    /// it goes out on a connection that no earlier request used, so no stale kept-alive
    /// connection can make the transport send it again, and a failure after any of its
    /// bytes may have left is reported, not retried.
    public var isRepeatable: Bool

    /// A request; by default without a body, with a 60-second deadline and no size limit,
    /// repeatable if its method is idempotent.
    public init(
        method: HTTPMethod,
        url: URL,
        headers: HTTPHeaders = [:],
        body: Data? = nil,
        streamedBody: StreamedBody? = nil,
        timeout: Duration = .seconds(60),
        maximumResponseSize: Int? = nil,
        destination: URL? = nil,
        isRepeatable: Bool? = nil
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.streamedBody = streamedBody
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.destination = destination
        self.isRepeatable = isRepeatable ?? method.isIdempotent
    }
}
