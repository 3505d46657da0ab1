/// A failure reported by libpq or the PostgreSQL server, found underneath a
/// `PersistenceError` thrown by ``PostgresPersistence``.
public struct PostgresError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable, Hashable {
        /// No connection could be made: refused, unresolvable, timed out, TLS refused.
        case connectionFailed
        /// The server refused the credentials.
        case authenticationFailed
        /// The connection broke during a call.
        case connectionLost
        /// The server refused or failed a statement (see ``sqlState``).
        case statementFailed
    }

    /// What failed.
    public let kind: Kind
    /// libpq's or the server's message.
    public let message: String
    /// The server's five-character SQLSTATE code (such as `40001`), for failed statements.
    public let sqlState: String?

    /// An error of `kind` with libpq's `message`.
    public init(kind: Kind, message: String, sqlState: String? = nil) {
        self.kind = kind
        self.message = message
        self.sqlState = sqlState
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        "PostgreSQL \(kind)\(sqlState.map { " (SQLSTATE \($0))" } ?? ""): \(message)"
    }
}
