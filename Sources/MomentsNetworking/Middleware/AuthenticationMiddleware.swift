public import MomentsHTTP
/// Sends a token with every request, and on 401 refreshes it once and retries once.
///
/// Many requests refused at the same time cause exactly one refresh (single flight); if
/// it fails, every one of them fails with
/// `HTTPClientError.Code.authenticationFailure`. The token never appears
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

    /// A middleware sending `provider`'s token in `header` (by default `Authorization: Bearer …`).
    public init(provider: any TokenProvider, header: Header = .bearer) {
        self.header = header
        self.tokens = TokenCoordinator(provider: provider)
    }

    /// The name of the header the token goes in.
    public var headerName: String { header.name }

    /// Adds the credentials to `request`, refreshing them once on a refusal (see ``HTTPMiddleware``).
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
        let refreshed: String
        do {
            refreshed = try await tokens.refresh(after: token)
        } catch let error as HTTPClientError where error.code == .authenticationFailure {
            // The failure says which answer refused the token.
            throw error.refusing(response)
        }
        request.headers[header.name] = header.prefix + refreshed
        return try await next(request)
    }

    /// Forgets the token a refresh obtained and abandons a refresh in flight, so the
    /// next request sends what the provider returns now: after a logout or a switch of
    /// user. (The provider is asked for every request anyway; this drops what the
    /// middleware itself remembers.)
    public func reset() async {
        await tokens.reset()
    }

    /// The header the next request will carry: the client keys its cached answer by it.
    public func identityContribution(for request: HTTPRequest) async throws -> IdentityContribution {
        .adds([header.name: header.prefix + (try await tokens.token())])
    }
}

/// Asks the provider for the token of every request, and makes concurrent refreshes
/// one.
///
/// A rotated token is therefore used by the next request. A token a refresh returned is
/// remembered only while the provider still returns the token it replaced.
actor TokenCoordinator {
    private let provider: any TokenProvider
    /// The token the server refused, and the one a refresh returned in its place.
    private var replaced: (rejected: String, replacement: String)?
    private var refreshing: Task<String, any Error>?
    private var generation = 0

    init(provider: any TokenProvider) {
        self.provider = provider
    }

    func token() async throws -> String {
        if let refreshing { return try await awaitRefresh(refreshing) }
        let token: String
        do {
            token = try await provider.currentToken()
        } catch {
            throw HTTPClientError.authenticationFailure("no token could be obtained (\(type(of: error)))", error: error)
        }
        if let replaced, replaced.rejected == token { return replaced.replacement }
        return token
    }

    func refresh(after rejected: String) async throws -> String {
        if let replaced, replaced.rejected == rejected { return replaced.replacement }
        if let refreshing { return try await awaitRefresh(refreshing) }
        let provider = self.provider
        let task = Task { try await provider.refreshToken(replacing: rejected) }
        refreshing = task
        generation += 1
        let started = generation
        defer { if generation == started { refreshing = nil } }
        let token = try await awaitRefresh(task)
        if generation == started { replaced = (rejected, token) }
        return token
    }

    func reset() {
        generation += 1
        refreshing?.cancel()
        refreshing = nil
        replaced = nil
    }

    private func awaitRefresh(_ task: Task<String, any Error>) async throws -> String {
        do {
            return try await task.value
        } catch {
            throw HTTPClientError.authenticationFailure("the token was refused and could not be refreshed (\(type(of: error)))", error: error)
        }
    }
}
