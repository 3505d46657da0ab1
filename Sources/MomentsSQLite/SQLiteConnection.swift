import Foundation
import MomentsSupport
import MomentsCSQLite

/// One SQLite connection and its prepared statements.
///
/// Not `Sendable`: it must have exactly one owner (``SQLitePersistence`` keeps it inside
/// an actor). Statements are finalized and the connection closed when it is released,
/// and also when opening fails half-way.
final class SQLiteConnection {
    let path: String
    private let handle: OpaquePointer
    private var statements: [String: SQLiteStatement] = [:]
    /// Whether ``close()`` ran: the handle is gone, and nothing may use it.
    private(set) var isClosed = false

    /// How a connection may use its file.
    enum Access {
        /// Read and write, creating the file if needed.
        case readWrite
        /// Read only, sharing the file with writers (needs its `-shm` file).
        case readOnly
        /// Read only, assuming nothing writes the file meanwhile: for a file that cannot
        /// be written at all (a full disk, a read-only file system), where SQLite could
        /// not create the `-shm` file a shared reader needs.
        case immutable
    }

    let access: Access
    /// How long a statement waits for another connection's lock.
    let busyTimeout: Duration

    init(path: String, busyTimeout: Duration, access: Access = .readWrite) throws(SQLiteError) {
        var handle: OpaquePointer?
        let flags: Int32
        var name = path
        switch access {
        case .readWrite:
            // A new store is the owner's only (0600); SQLite gives its -wal and -shm
            // files the same permissions.
            if path != ":memory:" && !path.isEmpty { AtomicFile.createPrivateFileIfMissing(path) }
            flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        case .readOnly:
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX
        case .immutable:
            let escaped = path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
            name = "file:\(escaped)?immutable=1"
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
        }
        self.access = access
        self.busyTimeout = busyTimeout
        let code = sqlite3_open_v2(name, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let error = SQLiteError(resultCode: code, connection: handle, statement: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        self.path = path
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
    }

    deinit {
        close()
    }

    /// Finalizes the statements and closes the connection (its file and locks); its
    /// owner must use it no more. Idempotent.
    func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in statements.values { statement.finalize() }
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// The cached prepared statement for `sql`, prepared on first use.
    func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statements[sql] { return cached }
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        statements[sql] = statement
        return statement
    }

    /// Runs SQL without results (schema changes, transaction control).
    func execute(_ sql: String) throws(SQLiteError) {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw SQLiteError(resultCode: code, connection: handle, statement: sql) }
    }

    /// The first column of the first row of `sql` as an integer.
    func integer(_ sql: String) throws(SQLiteError) -> Int64 {
        let statement = try statement(sql)
        defer { statement.reset() }
        guard try statement.step() else { return 0 }
        return statement.int(at: 0)
    }

    /// The first column of the first row of `sql` as text.
    func text(_ sql: String) throws(SQLiteError) -> String? {
        let statement = try SQLiteStatement(sql: sql, connection: handle)
        guard try statement.step() else { return nil }
        return statement.optionalText(at: 0)
    }

    /// ``text(_:)``, tried again while another connection's lock refuses it, until the
    /// busy timeout has passed: for a statement that takes the write lock while holding a
    /// read lock (`PRAGMA journal_mode = WAL`), where SQLite fails at once with
    /// `SQLITE_BUSY` instead of calling its busy handler, lest two connections each wait
    /// for the other. Between tries the lock is let go, so the other connection goes on.
    ///
    /// The pauses are counted, not the clock read (as the JSON-file store's lock does):
    /// the wait lasts at least the busy timeout, longer on a busy machine.
    func textWaitingWhileBusy(_ sql: String) throws(SQLiteError) -> String? {
        var microsecondsLeft = max(0, busyTimeout / .microseconds(1))
        var pause = 1_000.0
        while true {
            do {
                return try text(sql)
            } catch where error.isBusy && microsecondsLeft > 0 {
                // The thread waits, as it does in SQLite's own busy handler.
                let slept = min(pause, microsecondsLeft)
                usleep(UInt32(slept))
                microsecondsLeft -= slept
                pause = min(pause * 2, 50_000)
            }
        }
    }

    /// Rows changed by the last statement.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// The rowid of the last row this connection inserted.
    var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// Rows changed since the connection opened.
    var totalChanges: Int { Int(sqlite3_total_changes(handle)) }

    /// Runs `body` in a transaction: committed if it returns, rolled back if it throws.
    /// Writers take the write lock up front (`IMMEDIATE`), so the busy timeout applies
    /// instead of a deadlock between two processes upgrading read locks.
    func transaction<T>(writing: Bool, _ body: () throws -> T) throws -> T {
        try execute(writing ? "BEGIN IMMEDIATE" : "BEGIN")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}
