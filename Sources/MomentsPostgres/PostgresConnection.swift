import Foundation
import MomentsCPostgres
import MomentsSupport

/// One libpq connection, used by one thread at a time (its ``PostgresSession``'s).
///
/// Every call blocks until the server answers: callers keep it off Swift's cooperative
/// threads. Statements run through ``query(_:_:)`` are prepared once per connection and
/// reused by their SQL text. Parameters and results travel in libpq's text format.
final class PostgresConnection {
    private let handle: OpaquePointer
    private var prepared: [String: String] = [:]
    /// How long a statement may wait for the server's answer before the connection is
    /// taken for dead (its peer may have vanished without a word: the socket stays open
    /// and quiet, and libpq would wait forever). The default is 10 seconds.
    var answerTimeout: Duration = .seconds(10)
    /// Set when an answer did not come in time: the connection is not used again.
    private var isBroken = false

    /// Settings every connection gets unless its connection string says otherwise: a
    /// connection whose peer vanished silently (a NAT or load balancer forgot it, a
    /// failover) fails within seconds instead of the operating system's hours. TCP
    /// keepalives probe an idle connection after 5 s, every 2 s, 3 times;
    /// `tcp_user_timeout` fails one whose sent data goes unacknowledged for 10 s; a
    /// connection attempt gives up after 5 s.
    static let defaultSettings: [(keyword: String, value: String)] = [
        ("keepalives", "1"), ("keepalives_idle", "5"), ("keepalives_interval", "2"), ("keepalives_count", "3"),
        ("tcp_user_timeout", "10000"), ("connect_timeout", "5"),
    ]

    /// Connects with a libpq connection string (`host=… dbname=…` or `postgresql://…`);
    /// ``defaultSettings`` apply where it says nothing.
    ///
    /// - Throws: ``PostgresError`` with ``PostgresError/Kind-swift.enum/connectionFailed``
    ///   or ``PostgresError/Kind-swift.enum/authenticationFailed``.
    init(connectionString: String) throws {
        // The defaults first, then the connection string (expanded as `dbname`), whose
        // settings win over them.
        let keywords = Self.defaultSettings.map(\.keyword) + ["dbname"]
        let values = Self.defaultSettings.map(\.value) + [connectionString]
        let handle = Self.withCStrings(keywords) { keywords in
            Self.withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) } ?? nil
        } ?? nil
        guard let handle else {
            throw PostgresError(kind: .connectionFailed, message: "libpq could not allocate a connection")
        }
        guard PQstatus(handle) == CONNECTION_OK else {
            // libpq may repeat the connection string, password included, in its message.
            let message = Self.redactingSecrets(of: connectionString, from: Self.message(of: handle))
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

    /// `body` with `strings` as a NULL-terminated array of C strings (`nil` only if the
    /// array had no storage, which a non-empty array always has).
    private static func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T? {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
        return pointers.withUnsafeBufferPointer { buffer in buffer.baseAddress.map(body) }
    }

    /// Whether the connection still works as far as libpq knows, and answered in time.
    var isOpen: Bool { !isBroken && PQstatus(handle) == CONNECTION_OK }

    /// The socket, for waiting on notifications.
    var socket: Int32 { PQsocket(handle) }

    /// Runs `sql` (one or more statements, no parameters).
    func execute(_ sql: String) throws {
        try sent(PQsendQuery(handle, sql))
        let result = PostgresResult(try awaitResult())
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
        let accepted = values.withUnsafeBufferPointer { buffer in
            PQsendQueryPrepared(handle, name, Int32(parameters.count), buffer.baseAddress, nil, nil, 0)
        }
        try sent(accepted)
        let result = PostgresResult(try awaitResult())
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
        try sent(PQsendPrepare(handle, name, sql, Int32(parameterCount), nil))
        let result = PostgresResult(try awaitResult())
        try check(result, sql: sql)
        prepared[sql] = name
        return name
    }

    /// Throws unless libpq took the statement (`accepted` is its `PQsend…` result).
    private func sent(_ accepted: Int32) throws {
        guard accepted != 1 else { return }
        let message = Self.message(of: handle)
        if !isOpen {
            prepared.removeAll()
            throw PostgresError(kind: .connectionLost, message: message)
        }
        throw PostgresError(kind: .statementFailed, message: message)
    }

    /// The last result of the statement sent, waiting for the server at most
    /// ``answerTimeout`` in all (libpq's own calls would wait forever on a silent peer).
    private func awaitResult() throws -> OpaquePointer? {
        let deadline = ContinuousClock.now + answerTimeout
        var last: OpaquePointer?
        while true {
            while PQisBusy(handle) == 1 {
                let remaining = deadline - ContinuousClock.now
                guard remaining > .zero else {
                    if let last { PQclear(last) }
                    isBroken = true
                    prepared.removeAll()
                    throw PostgresError(kind: .connectionLost, message: "the server did not answer within \(answerTimeout)")
                }
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, max(1, Int32(clamping: Int((remaining.seconds * 1_000).rounded(.up)))))
                guard PQconsumeInput(handle) == 1 else {
                    if let last { PQclear(last) }
                    prepared.removeAll()
                    throw PostgresError(kind: .connectionLost, message: Self.message(of: handle))
                }
            }
            guard let result = PQgetResult(handle) else { return last }
            if let last { PQclear(last) }
            last = result
        }
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
    /// `message` with every secret of `connectionString` removed: the string itself (it
    /// may hold a password, and libpq echoes strings it cannot parse), the password libpq
    /// parses out of it, and anything that reads as a password in it (a URI's
    /// `user:password@`, a `password=` setting), parsable or not.
    static func redactingSecrets(of connectionString: String, from message: String) -> String {
        var secrets: [String] = []
        if let options = PQconninfoParse(connectionString, nil) {
            defer { PQconninfoFree(options) }
            var option = options
            while let keyword = option.pointee.keyword {
                if String(cString: keyword) == "password", let value = option.pointee.val { secrets.append(String(cString: value)) }
                option += 1
            }
        }
        if let scheme = connectionString.range(of: "://") {
            let rest = connectionString[scheme.upperBound...]
            if let at = rest.lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") {
                secrets.append(String(rest[rest.index(after: colon)..<at]))
            }
        }
        var searchFrom = connectionString.startIndex
        while let key = connectionString.range(of: "password", options: .caseInsensitive, range: searchFrom..<connectionString.endIndex) {
            searchFrom = key.upperBound
            var value = connectionString[key.upperBound...].drop { $0 == " " || $0 == "=" }
            if value.first == "'" { value = value.dropFirst().prefix { $0 != "'" } } else { value = value.prefix { $0 != " " && $0 != "&" } }
            if !value.isEmpty { secrets.append(String(value)) }
        }
        var redacted = message.replacingOccurrences(of: connectionString, with: location(of: connectionString))
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            redacted = redacted.replacingOccurrences(of: secret, with: "<redacted>")
        }
        return redacted
    }

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
