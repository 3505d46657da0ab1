/// Supplies the token an ``AuthenticationMiddleware`` sends, and a new one when the
/// server refuses it.
///
/// ``currentToken()`` is asked for every request, so a provider that rotates its token
/// (or drops it at logout) is followed by the next request; make it cheap, caching the
/// token if obtaining it costs anything.
public protocol TokenProvider: Sendable {
    /// The token to send with the next request.
    func currentToken() async throws -> String

    /// A new token, after the server answered 401 to `rejected`.
    func refreshToken(replacing rejected: String) async throws -> String
}

/// A token that never changes; a 401 cannot be recovered from.
public struct StaticTokenProvider: TokenProvider {
    private let token: String

    /// A provider of `token`, always.
    public init(_ token: String) { self.token = token }

    /// The token.
    public func currentToken() -> String { token }

    /// A static token cannot be refreshed: throws.
    public func refreshToken(replacing rejected: String) throws -> String {
        throw ValidationError("a static token cannot be refreshed")
    }
}
