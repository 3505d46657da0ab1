import Foundation
import MomentsCPostgres

/// One libpq connection, used by one thread at a time (its ``PostgresSession``'s).
///
/// Every call blocks until the server answers: callers keep it off Swift's cooperative
/// threads. Statements run through ``query(_:_:)`` are prepared once per connection and
/// reused by their SQL text. Parameters and results travel in libpq's text format.
final class PostgresConnection {
    private let handle: OpaquePointer
    private var prepared: [String: String] = [:]

    /// Connects with a libpq connection string (`host=… dbname=…` or `postgresql://…`).
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Kind-swift.enum/connectionFailed``
    ///   or ``PostgresError/Kind-swift.enum/authenticationFailed``.
    init(connectionString: String) throws {
        guard let handle = PQconnectdb(connectionString) else {
            throw PostgresError(kind: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            let message = Self.message(of: handle)
            PQfinish(handle)
            throw PostgresError(kind: Self.isAuthenticationFailure(message) ? .authenticationFailed : .connectionFailed, message: message)
        }
        // libpq prints notices (such as "relation already exists, skipping") to stderr
        // unless told otherwise; the SDK never writes to the process's streams.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        self.handle = handle
    }

    deinit {
        PQfinish(handle)
    }

    /// Whether the connection still works as far as libpq knows.
    var isOpen: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The socket, for waiting on notifications.
    var socket: Int32 { PQsocket(handle) }

    /// Runs `sql` (one or more statements, no parameters).
    func execute(_ sql: String) throws {
        let result = PostgresResult(PQexec(handle, sql))
        try check(result, sql: sql)
    }

    /// Runs one statement with `parameters` (`$1`, `$2`, …; `nil` is SQL NULL), prepared
    /// on first use, and returns its rows.
    @discardableResult
    func query(_ sql: String, _ parameters: [String?] = []) throws -> PostgresResult {
        let name = try preparedName(for: sql, parameterCount: parameters.count)
        let copies = parameters.map { $0.flatMap { strdup($0) } }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer($0) }
        let result = values.withUnsafeBufferPointer { buffer in
            PostgresResult(PQexecPrepared(handle, name, Int32(parameters.count), buffer.baseAddress, nil, nil, 0))
        }
        try check(result, sql: sql)
        return result
    }

    /// Reads the notifications that have arrived, without blocking.
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Kind-swift.enum/connectionLost``
    ///   when the connection is gone.
    func notifications() throws -> [(channel: String, payload: String)] {
        guard PQconsumeInput(handle) == 1 else {
            throw PostgresError(kind: .connectionLost, message: Self.message(of: handle))
        }
        var received: [(channel: String, payload: String)] = []
        while let notification = PQnotifies(handle) {
            received.append((String(cString: notification.pointee.relname), String(cString: notification.pointee.extra)))
            PQfreemem(notification)
        }
        return received
    }

    private func preparedName(for sql: String, parameterCount: Int) throws -> String {
        if let name = prepared[sql] { return name }
        let name = "moments_\(prepared.count + 1)"
        let result = PostgresResult(PQprepare(handle, name, sql, Int32(parameterCount), nil))
        try check(result, sql: sql)
        prepared[sql] = name
        return name
    }

    private func check(_ result: PostgresResult, sql: String) throws {
        switch result.status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
            return
        default:
            let message = result.errorMessage ?? Self.message(of: handle)
            if !isOpen {
                prepared.removeAll()
                throw PostgresError(kind: .connectionLost, message: message)
            }
            throw PostgresError(kind: .statementFailed, message: message, sqlState: result.sqlState)
        }
    }

    private static func message(of handle: OpaquePointer) -> String {
        guard let text = PQerrorMessage(handle) else { return "unknown libpq error" }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    private static func isAuthenticationFailure(_ message: String) -> Bool {
        ["authentication failed", "no pg_hba.conf entry", "password", "role \""].contains { message.contains($0) }
    }
}

/// One libpq result, freed when released.
final class PostgresResult {
    private let handle: OpaquePointer?

    init(_ handle: OpaquePointer?) {
        self.handle = handle
    }

    deinit {
        PQclear(handle)
    }

    var status: ExecStatusType { handle.map(PQresultStatus) ?? PGRES_FATAL_ERROR }

    var rowCount: Int { handle.map { Int(PQntuples($0)) } ?? 0 }

    /// The text of a field; `nil` for SQL NULL.
    func text(_ row: Int, _ column: Int) -> String? {
        guard let handle, PQgetisnull(handle, Int32(row), Int32(column)) == 0, let value = PQgetvalue(handle, Int32(row), Int32(column)) else {
            return nil
        }
        return String(cString: value)
    }

    var errorMessage: String? {
        guard let handle, let text = PQresultErrorMessage(handle), text.pointee != 0 else { return nil }
        return String(cString: text).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    var sqlState: String? {
        guard let handle, let text = PQresultErrorField(handle, Int32(UInt8(ascii: "C"))) else { return nil }
        return String(cString: text)
    }
}

extension PostgresConnection {
    /// Where `connectionString` points, for error messages: host, port, database and
    /// user, never the password.
    static func location(of connectionString: String) -> String {
        guard let options = PQconninfoParse(connectionString, nil) else { return "postgres:(unparsable connection string)" }
        defer { PQconninfoFree(options) }
        var parts: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { parts[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let host = parts["host"] ?? parts["hostaddr"] ?? "localhost"
        let port = parts["port"].map { ":\($0)" } ?? ""
        let user = parts["user"].map { "\($0)@" } ?? ""
        return "postgres://\(user)\(host)\(port)/\(parts["dbname"] ?? "")"
    }
}
