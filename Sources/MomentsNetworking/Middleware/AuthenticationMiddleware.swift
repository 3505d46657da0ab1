/// Sends a token with every request, and on 401 refreshes it once and retries once.
///
/// Many requests refused at the same time cause exactly one refresh (single flight); if
/// it fails, every one of them fails with
/// ``HTTPClientError/Code-swift.struct/authenticationFailure``. The token never appears
/// in an error or a log record.
///
/// For example:
/// ```swift
/// configuration.authentication = AuthenticationMiddleware(provider: MyTokens(), header: .bearer)
/// configuration.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(t), header: .custom("X-Api-Auth-Token"))
/// ```
public struct AuthenticationMiddleware: HTTPMiddleware {
    /// Where the token goes.
    public struct Header: Sendable {
        let name: String
        let prefix: String

        /// `Authorization: Bearer <token>`.
        public static let bearer = Header(name: "Authorization", prefix: "Bearer ")

        /// `<name>: <token>`, e.g. `X-Api-Auth-Token`.
        public static func custom(_ name: String) -> Header { Header(name: name, prefix: "") }
    }

    private let header: Header
    private let tokens: TokenCoordinator

    public init(provider: any TokenProvider, header: Header = .bearer) {
        self.header = header
        self.tokens = TokenCoordinator(provider: provider)
    }

    public func intercept(
        _ request: HTTPRequest,
        context: RequestContext,
        next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        let token = try await tokens.token()
        var request = request
        request.headers[header.name] = header.prefix + token
        let response = try await next(request)
        guard response.statusCode == 401 else { return response }
        let refreshed = try await tokens.refresh(after: token)
        request.headers[header.name] = header.prefix + refreshed
        return try await next(request)
    }
}

/// Holds the current token and makes sure concurrent refreshes become one.
actor TokenCoordinator {
    private let provider: any TokenProvider
    private var current: String?
    private var refreshing: Task<String, any Error>?

    init(provider: any TokenProvider) {
        self.provider = provider
    }

    func token() async throws -> String {
        if let current { return current }
        if let refreshing { return try await awaitRefresh(refreshing) }
        do {
            let token = try await provider.currentToken()
            current = token
            return token
        } catch {
            throw HTTPClientError.authenticationFailure("no token could be obtained (\(type(of: error)))", error: error)
        }
    }

    func refresh(after rejected: String) async throws -> String {
        if let current, current != rejected { return current }
        if let refreshing { return try await awaitRefresh(refreshing) }
        let provider = self.provider
        let task = Task { try await provider.refreshToken(replacing: rejected) }
        refreshing = task
        current = nil
        defer { refreshing = nil }
        let token = try await awaitRefresh(task)
        current = token
        return token
    }

    private func awaitRefresh(_ task: Task<String, any Error>) async throws -> String {
        do {
            return try await task.value
        } catch {
            throw HTTPClientError.authenticationFailure("the token was refused and could not be refreshed (\(type(of: error)))", error: error)
        }
    }
}
