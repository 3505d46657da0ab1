import MomentsSupport

/// One pooled connection and the thread that owns it: every libpq call on the
/// connection runs on that thread, never on Swift's cooperative pool.
///
/// The connection is opened on first use and opened again after it was lost.
actor PostgresSession {
    private let executor: ThreadExecutor
    private let connectionString: String
    private let answerTimeout: Duration
    private var connection: PostgresConnection?
    /// Set by ``close()``: no connection is opened again.
    private var isClosed = false

    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    init(connectionString: String, name: String, answerTimeout: Duration = .seconds(10)) {
        self.connectionString = connectionString
        self.answerTimeout = answerTimeout
        executor = ThreadExecutor(name: name)
    }

    deinit {
        executor.shutDown()
    }

    /// Runs `body` on the connection, opening it first if needed.
    ///
    /// When the connection is lost during `body` and `retry` is true, the connection is
    /// opened again and `body` runs once more: the caller promises running it twice is
    /// harmless (a read, or an idempotent write).
    func run<T: Sendable>(retry: Bool, _ body: @Sendable (PostgresConnection) throws -> T) throws -> T {
        do {
            return try body(try open())
        } catch let error as PostgresError where error.kind == .connectionLost && retry {
            connection = nil
            return try body(try open())
        } catch let error as PostgresError where error.kind == .connectionLost {
            connection = nil
            throw error
        }
    }

    /// Closes the connection, after any call running on it, for good.
    func close() {
        isClosed = true
        connection = nil
    }

    private func open() throws -> PostgresConnection {
        guard !isClosed else { throw PostgresError(kind: .connectionFailed, message: "the connection pool was closed") }
        if let connection, connection.isOpen { return connection }
        connection = nil
        let opened = try PostgresConnection(connectionString: connectionString)
        opened.answerTimeout = answerTimeout
        connection = opened
        return opened
    }
}
