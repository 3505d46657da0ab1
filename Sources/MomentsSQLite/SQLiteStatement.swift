import MomentsCSQLite

/// A prepared statement. Owned by one ``SQLiteConnection`` and used only by its owner;
/// finalized when the connection closes or the statement is released.
final class SQLiteStatement {
    let sql: String
    private var handle: OpaquePointer?
    private let connection: OpaquePointer

    init(sql: String, connection: OpaquePointer) throws(SQLiteError) {
        self.sql = sql
        self.connection = connection
        var handle: OpaquePointer?
        let code = sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        guard code == SQLITE_OK, let handle else {
            sqlite3_finalize(handle)
            throw SQLiteError(resultCode: code, connection: connection, statement: sql)
        }
        self.handle = handle
    }

    deinit { finalize() }

    func finalize() {
        sqlite3_finalize(handle)
        handle = nil
    }

    // MARK: Binding (1-based indexes, as in SQLite)

    /// Binds with the explicit byte count, so text holding a NUL is stored whole.
    func bind(_ value: String, at index: Int32) {
        var value = value
        value.withUTF8 { bytes in
            let pointer = bytes.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            if let pointer {
                sqlite3_bind_text(handle, index, pointer, Int32(bytes.count), moments_sqlite_transient())
            } else {
                sqlite3_bind_text(handle, index, "", 0, moments_sqlite_transient())
            }
        }
    }

    func bind(_ value: String?, at index: Int32) {
        if let value { bind(value, at: index) } else { sqlite3_bind_null(handle, index) }
    }

    func bind(_ value: Int64, at index: Int32) {
        sqlite3_bind_int64(handle, index, value)
    }

    func bind(_ value: Int64?, at index: Int32) {
        if let value { sqlite3_bind_int64(handle, index, value) } else { sqlite3_bind_null(handle, index) }
    }

    func optionalInt(at column: Int32) -> Int64? {
        isNull(at: column) ? nil : int(at: column)
    }

    func bind(_ value: Bool?, at index: Int32) {
        if let value { sqlite3_bind_int64(handle, index, value ? 1 : 0) } else { sqlite3_bind_null(handle, index) }
    }

    // MARK: Running

    /// Steps once; returns `true` while there is a row to read.
    func step() throws(SQLiteError) -> Bool {
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw SQLiteError(resultCode: code, connection: connection, statement: sql)
        }
    }

    /// Runs to completion, ignoring rows.
    func run() throws(SQLiteError) {
        defer { reset() }
        while try step() {}
    }

    /// Makes the statement ready to run again, with no values bound.
    func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    // MARK: Reading columns (0-based indexes)

    func isNull(at column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// The text of a column; bytes that are not valid UTF-8 are replaced (for the
    /// database's own answers, such as pragmas; stored data goes through ``validText(at:)``).
    func text(at column: Int32) -> String {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func optionalText(at column: Int32) -> String? {
        isNull(at: column) ? nil : text(at: column)
    }

    /// The text of a column, or `nil` if its bytes are not valid UTF-8 (damage).
    func validText(at column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(handle, column) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, column))
        return String(validating: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    func int(at column: Int32) -> Int64 {
        sqlite3_column_int64(handle, column)
    }
}
