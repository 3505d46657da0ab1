public import Foundation

/// Sends ``Request``s to one API and decodes their answers.
///
/// For example:
/// ```swift
/// let client = HTTPClient(baseURL: URL(string: "https://bff.example.com")!)
/// let user = try await client.send(GetUser(id: "42"))
/// ```
///
/// Every failure is an ``HTTPClientError``. Requests run concurrently: sending does not
/// wait for other requests of the same client, and decoding runs off the actor.
public actor HTTPClient {
    /// How this client builds, sends and checks requests.
    public nonisolated let configuration: Configuration
    /// What sends the requests.
    public nonisolated let transport: any HTTPTransport

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: How requests are built, sent and checked.
    ///   - transport: What sends them. The default is a new ``URLSessionTransport``.
    public init(configuration: Configuration, transport: any HTTPTransport = URLSessionTransport()) {
        self.configuration = configuration
        self.transport = transport
    }

    /// Creates a client for `baseURL`, letting `configure` adjust the defaults.
    public init(
        baseURL: URL,
        transport: any HTTPTransport = URLSessionTransport(),
        configure: (inout Configuration) -> Void = { _ in }
    ) {
        self.init(configuration: Configuration(baseURL: baseURL, configure: configure), transport: transport)
    }

    /// Sends `request` and returns its decoded answer.
    ///
    /// - Throws: ``HTTPClientError``.
    public nonisolated func send<R: Request>(_ request: R) async throws -> R.Response {
        try await response(for: request).value
    }

    /// Sends `request` and returns its decoded answer with the status, headers and
    /// duration of the exchange.
    ///
    /// - Throws: ``HTTPClientError``.
    public nonisolated func response<R: Request>(for request: R) async throws -> DecodedResponse<R.Response> {
        let started = ContinuousClock.now
        let httpRequest = try makeHTTPRequest(for: request)
        let response = try await exchange(httpRequest)
        let value = try decode(response, for: request, sentAs: httpRequest)
        return DecodedResponse(
            value: value,
            statusCode: response.statusCode,
            headers: response.headers,
            duration: ContinuousClock.now - started
        )
    }

    // MARK: - Steps

    /// Validates `request` and builds what the transport sends.
    ///
    /// - Throws: ``HTTPClientError/Code-swift.struct/invalidRequest`` or
    ///   ``HTTPClientError/Code-swift.struct/cancelled``.
    public nonisolated func makeHTTPRequest<R: Request>(for request: R) throws -> HTTPRequest {
        if Task.isCancelled { throw HTTPClientError.cancelled() }
        do {
            try request.validate()
        } catch {
            throw HTTPClientError.invalidRequest("\(R.self) is invalid: \(error)", underlyingError: error)
        }
        let url = try makeURL(path: request.path, query: request.query)
        var headers = configuration.defaultHeaders
        var bodyData: Data?
        if let body = request.body {
            do {
                bodyData = try body.encoded(with: configuration.encoder)
            } catch {
                throw HTTPClientError.invalidRequest("the body of \(R.self) could not be encoded: \(error)", underlyingError: error)
            }
            if let contentType = body.contentType { headers["Content-Type"] = contentType }
        }
        return HTTPRequest(
            method: request.method,
            url: url,
            headers: headers.merging(request.headers),
            body: bodyData,
            timeout: request.timeout ?? configuration.timeout,
            maximumResponseSize: configuration.maximumResponseSize
        )
    }

    private nonisolated func makeURL(path: String, query: [URLQueryItem]) throws -> URL {
        var base = configuration.baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        let separator = path.hasPrefix("/") ? "" : "/"
        guard var components = URLComponents(string: base + separator + path) else {
            throw HTTPClientError.invalidRequest("the path '\(path)' does not form a valid URL; place identifiers with \"\\(segment: id)\"")
        }
        if !query.isEmpty {
            components.queryItems = (components.queryItems ?? []) + query
            // URLComponents leaves "+" alone, which servers read as a space.
            components.percentEncodedQuery = components.percentEncodedQuery?
                .replacingOccurrences(of: "+", with: "%2B")
        }
        guard let url = components.url else {
            throw HTTPClientError.invalidRequest("the path '\(path)' does not form a valid URL")
        }
        return url
    }

    /// Sends through the transport, normalizing every failure to ``HTTPClientError``.
    private nonisolated func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await transport.send(request)
        } catch let error as HTTPClientError {
            throw error.attaching(method: request.method, url: request.url)
        } catch {
            let normalized: HTTPClientError = Task.isCancelled || error is CancellationError
                ? .cancelled()
                : .transportFailure(TransportFailure(kind: .other, message: String(describing: error)))
            throw normalized.attaching(method: request.method, url: request.url)
        }
        if let limit = request.maximumResponseSize, response.body.count > limit {
            throw HTTPClientError.responseTooLarge(limit: limit, received: response.body.count)
                .attaching(method: request.method, url: request.url)
        }
        return response
    }

    private nonisolated func decode<R: Request>(
        _ response: HTTPResponse,
        for request: R,
        sentAs httpRequest: HTTPRequest
    ) throws -> R.Response {
        guard configuration.acceptedStatusCodes.contains(response.statusCode) else {
            let error = request.failure(for: response, decoder: configuration.decoder) ?? .serverError(response)
            throw error.attaching(method: httpRequest.method, url: httpRequest.url)
        }
        do {
            return try request.decodeResponse(response, decoder: configuration.decoder)
        } catch let error as HTTPClientError {
            throw error.attaching(method: httpRequest.method, url: httpRequest.url)
        } catch {
            throw HTTPClientError.decodingFailed(R.Response.self, error: error, response: response)
                .attaching(method: httpRequest.method, url: httpRequest.url)
        }
    }
}
