import MomentsCSQLite

/// An error reported by SQLite: the result code, SQLite's message and the statement that
/// failed. Bound values are never part of it.
public struct SQLiteError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The primary result code, e.g. `SQLITE_BUSY` (5) or `SQLITE_NOTADB` (26).
    public let resultCode: Int32
    /// The extended result code, e.g. `SQLITE_IOERR_FSYNC`.
    public let extendedResultCode: Int32
    /// SQLite's explanation.
    public let message: String
    /// The SQL that failed, with `?` placeholders and never their values.
    public let statement: String?

    init(resultCode: Int32, connection: OpaquePointer?, statement: String?) {
        self.extendedResultCode = resultCode
        self.resultCode = resultCode & 0xFF
        if let connection, let text = sqlite3_errmsg(connection) {
            self.message = String(cString: text)
        } else {
            self.message = String(cString: sqlite3_errstr(resultCode))
        }
        self.statement = statement
    }

    /// Whether another connection held a lock the statement needed for longer than the
    /// busy timeout (`SQLITE_BUSY` or `SQLITE_LOCKED`).
    public var isBusy: Bool { resultCode == SQLITE_BUSY || resultCode == SQLITE_LOCKED }

    /// A one-line description, for logs and messages.
    public var description: String {
        var text = "SQLite error \(resultCode)"
        if extendedResultCode != resultCode { text += " (extended \(extendedResultCode))" }
        text += ": \(message)"
        if let statement { text += " — while executing: \(statement)" }
        return text
    }
}
