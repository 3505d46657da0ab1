public import Foundation
import MomentsSupport
public import MomentsHTTP

/// A transport that answers from a closure instead of the network, for tests.
///
/// It records every request it receives, so a test can assert on what was sent.
///
/// For example:
/// ```swift
/// let transport = StubTransport { request in
///     HTTPResponse(statusCode: 200, body: Data(#"{"name":"Ada"}"#.utf8))
/// }
/// let client = HTTPClient(baseURL: URL(string: "https://api.example.com")!, transport: transport)
/// ```
public final class StubTransport: HTTPTransport {
    /// Answers one request.
    public typealias Handler = @Sendable (HTTPRequest) async throws -> HTTPResponse

    private let handler: Handler
    private let recorded = PThreadMutex<[HTTPRequest]>([])

    /// Creates a transport that answers every request with `handler`.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// Creates a transport that answers every request with the same response.
    public convenience init(statusCode: Int = 200, headers: HTTPHeaders = [:], body: Data = Data()) {
        let response = HTTPResponse(statusCode: statusCode, headers: headers, body: body)
        self.init { _ in response }
    }

    /// Every request received so far, in order.
    public var requests: [HTTPRequest] {
        recorded.withLock { $0 }
    }

    /// Sends `request` and returns the answer (see `HTTPTransport`).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        recorded.withLock { $0.append(request) }
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        let response = try await handler(request)
        if let limit = request.maximumResponseSize, response.body.count > limit {
            throw HTTPClientError.responseTooLarge(limit: limit, received: response.body.count)
        }
        return response
    }
}
