public import Moments
import Foundation
import MomentsSupport
public import MomentsObservability

/// Timelines kept in a PostgreSQL database that several instances of a service share,
/// each seeing the others' confirmed changes.
///
/// ```swift
/// let persistence = try await PostgresPersistence(connectionString: "host=db dbname=moments user=app")
/// let store = MomentsStore(service: service, persistence: persistence, configuration: .init {
///     $0.changeBus = persistence  // apply and emit what other instances commit
/// })
/// ```
///
/// The connection string is libpq's (`key=value` pairs or a `postgresql://` URL); TLS is
/// chosen there (`sslmode=verify-full sslrootcert=…`), as are timeouts
/// (`connect_timeout`). Tables are created, or migrated, on first use (see the schema
/// in the package's documentation); a database written by a newer SDK is refused with
/// `PersistenceError.Code.unsupportedVersion`.
///
/// ## Rules
/// - Every call runs on a connection of a bounded pool (``Configuration-swift.struct/poolSize``),
///   each connection on a thread of its own: libpq's blocking calls never run on
///   Swift's cooperative threads. Callers beyond the pool's size wait their turn.
/// - A batch is one transaction; a like writes one row. Rows are written in key order,
///   so instances writing the same rows do not deadlock.
/// - A moment or timeline row is never replaced by a value the server certainly
///   computed before the stored one, nor a confirmed value by one of unknown age (from
///   a cache).
/// - Each save that writes moments or timelines announces them with `NOTIFY` from the
///   same transaction (nothing is announced that did not commit), tagged with this
///   instance's ``instanceID``, so the instance never applies its own changes. A moment
///   or a timeline (its owner, list and `isLiked`s) whose save replaced a different
///   value confirmed at an overlapping time is contested: announced to every instance,
///   this one included, so the server settles which came last.
/// - A moment's row keeps the answers to likes (`LikeConfirmation`) until a write the
///   server certainly computed after them: each is the authority for its liker's
///   place in `likes` in every value written meanwhile, so an older value saved at an overlapping time never undoes a confirmed
///   like for an instance that loads the row. A write whose value such an answer
///   changed is contested.
/// - A connection lost during a call is opened again and the call retried once: every
///   call is a read or an idempotent write. A second loss throws
///   `PersistenceError.Code.connectionLost`.
/// - Errors are `PersistenceError`s: `PersistenceError.Code.connectionFailed`,
///   `PersistenceError.Code.authenticationFailed`,
///   `PersistenceError.Code.connectionLost`, `PersistenceError.Code.corruptedData`
///   for rows that cannot be read, `PersistenceError.Code.databaseFailure`
///   for anything else the server refuses, each with a ``PostgresError`` underneath.
///   Locations never show the password.
///
/// Use one `PostgresPersistence` per store: changes are told apart by instance.
public final class PostgresPersistence: MomentsPersistence, Sendable {
    /// Pool size, notification channel and where to log.
    public struct Configuration: Sendable {
        /// The most connections open at once for loads and saves (the change feed uses
        /// one more). The default is 4.
        public var poolSize: Int = 4
        /// The `LISTEN/NOTIFY` channel instances announce changes on. Instances sharing a
        /// database must agree on it. The default is `moments_changes`.
        public var channel: String = "moments_changes"
        /// Receives the change feed's connection losses and reconnections. The default
        /// is `nil`.
        public var logHandler: LogHandler?
        /// How often the change feed proves its connection alive: a heartbeat is
        /// announced on the channel and must come back through the listening connection.
        /// The default is 2 seconds.
        public var heartbeatInterval: Duration = .seconds(2)
        /// How long a heartbeat may take to come back before the listening connection is
        /// taken for dead (a peer that vanished silently leaves it open and quiet) and
        /// replaced: a silent loss is found within ``heartbeatInterval`` plus this. The
        /// default is 5 seconds.
        public var heartbeatTimeout: Duration = .seconds(5)
        /// How long a statement may wait for the database's answer before its
        /// connection is taken for dead and replaced (the call is then retried once on a
        /// fresh connection): libpq alone would wait forever on a peer that vanished
        /// silently. The default is 10 seconds.
        public var answerTimeout: Duration = .seconds(10)

        /// Every default.
        public init() {}

        /// Every default, then `configure`.
        public init(configure: (inout Configuration) -> Void) {
            configure(&self)
        }
    }

    /// This instance's id, sent with every announcement.
    public let instanceID: String
    /// Where the database is, without the password (for messages).
    public let location: String
    /// The configuration.
    public let configuration: Configuration

    private let pool: PostgresPool
    let listener: PostgresChangeListener
    /// Set by ``close()``.
    private let closed = PThreadMutex(false)

    /// Connects, creates or migrates the schema, and starts listening for other
    /// instances' changes (on a connection and thread of its own), so every change
    /// committed after it returns reaches ``sharedChanges()``'s subscribers.
    ///
    /// - Throws: `PersistenceError` (`PersistenceError.Code.connectionFailed`,
    ///   `PersistenceError.Code.authenticationFailed`,
    ///   `PersistenceError.Code.unsupportedVersion`, …).
    public init(connectionString: String, configuration: Configuration = Configuration()) async throws {
        let location = PostgresConnection.location(of: connectionString)
        let instanceID = UUID().uuidString
        self.location = location
        self.instanceID = instanceID
        self.configuration = configuration
        let pool = PostgresPool(connectionString: connectionString, size: configuration.poolSize, answerTimeout: configuration.answerTimeout)
        self.pool = pool
        let channel = configuration.channel
        listener = PostgresChangeListener(
            connectionString: connectionString, channel: channel, instanceID: instanceID,
            location: location, logHandler: configuration.logHandler,
            heartbeatInterval: configuration.heartbeatInterval, heartbeatTimeout: configuration.heartbeatTimeout,
            answerTimeout: configuration.answerTimeout,
            sendHeartbeat: { payload in
                // Through a pooled connection: it must come back through the listening one.
                Task { try? await pool.run(retry: false) { _ = try $0.query("SELECT pg_notify($1, $2)", [channel, payload]) } }
            }
        )
        try await run(userID: nil) { connection in try PostgresSchema.migrate(connection) }
        await listener.start()
    }

    deinit {
        listener.stop()
    }

    /// Stops listening for other instances' changes (every ``sharedChanges()`` stream
    /// ends) and closes every connection, each once the call running on it has ended;
    /// every later call throws `PersistenceError.Code.closed`. Idempotent.
    public func close() async {
        closed.withLock { $0 = true }
        listener.stop()
        await pool.close()
    }

    /// How many times the change feed's connection was lost and restored.
    public var changeFeedInterruptions: Int { listener.interruptions }

    // MARK: - MomentsPersistence

    /// The timeline saved for `userID`, or `nil` (see `MomentsPersistence`).
    public func load(userID: String) async throws -> MomentsDetails? {
        try await run(userID: userID) { connection in try PostgresRows.timeline(of: userID, on: connection)?.0 }
    }

    /// Saves `batch` all or nothing (see `MomentsPersistence`).
    public func save(_ batch: PersistenceBatch) async throws {
        guard !batch.isEmpty else { return }
        for (userID, timeline) in batch.timelines {
            if let duplicate = timeline.duplicateMomentID {
                throw PersistenceError.duplicateMoment(duplicate, location: location, userID: userID)
            }
        }
        let channel = configuration.channel
        let instanceID = instanceID
        try await run(userID: batch.timelines.count == 1 ? batch.timelines.keys.first : nil) { connection in
            try Self.transaction(on: connection) {
                let written = try PostgresRows.write(batch, on: connection)
                let announcement = ChangeAnnouncement(
                    origin: instanceID, momentIDs: written.momentIDs, userIDs: written.userIDs, contested: written.contested,
                    contestedUsers: written.contestedUserIDs
                )
                for payload in announcement.payloads {
                    try connection.query("SELECT pg_notify($1, $2)", [channel, payload])
                }
            }
        }
    }

    /// The users whose saved timelines hold `momentID`.
    public func userIDs(holding momentID: String) async throws -> [String] {
        try await run(userID: nil) { connection in
            let result = try connection.query(
                "SELECT user_id FROM moments_timeline_entry WHERE moment_id = $1 ORDER BY user_id", [StoredID.encode(momentID)]
            )
            return (0..<result.rowCount).compactMap { result.text($0, 0).map(StoredID.decode) }
        }
    }

    /// Removes `userID`'s timeline and the moments no other timeline holds, and
    /// announces it: other instances forget the timeline.
    public func remove(userID: String) async throws {
        let announcement = ChangeAnnouncement(origin: instanceID, momentIDs: [], userIDs: [], removedUsers: [userID])
        let channel = configuration.channel
        try await run(userID: userID) { connection in
            try Self.transaction(on: connection) {
                let stored = StoredID.encode(userID)
                let removed = try connection.query("DELETE FROM moments_timeline_entry WHERE user_id = $1 RETURNING moment_id", [stored])
                try connection.query("DELETE FROM moments_timeline WHERE user_id = $1", [stored])
                try PostgresRows.removeStoredOrphans((0..<removed.rowCount).compactMap { removed.text($0, 0) }, on: connection)
                for payload in announcement.payloads { try connection.query("SELECT pg_notify($1, $2)", [channel, payload]) }
            }
        }
    }

    /// Every user with a saved timeline.
    public func userIDs() async throws -> [String] {
        try await run(userID: nil) { connection in
            let result = try connection.query("SELECT user_id FROM moments_timeline ORDER BY user_id")
            return (0..<result.rowCount).compactMap { result.text($0, 0).map(StoredID.decode) }
        }
    }

    /// Removes every timeline and moment, and announces it: other instances forget
    /// everything they hold.
    public func removeAll() async throws {
        let announcement = ChangeAnnouncement(origin: instanceID, momentIDs: [], userIDs: [], removedEverything: true)
        let channel = configuration.channel
        try await run(userID: nil) { connection in
            try Self.transaction(on: connection) {
                try connection.execute("DELETE FROM moments_timeline_entry; DELETE FROM moments_moment; DELETE FROM moments_timeline;")
                for payload in announcement.payloads { try connection.query("SELECT pg_notify($1, $2)", [channel, payload]) }
            }
        }
    }

    /// `true`: instances sharing the database order each other's writes by when the
    /// server confirmed them.
    public var keepsConfirmationIntervals: Bool { true }

    /// Throws unless a save can be expected to succeed now.
    public func checkWritable() async throws {
        let readOnly = try await run(userID: nil) { connection in
            let result = try connection.query("SELECT current_setting('transaction_read_only'), pg_is_in_recovery()")
            return result.text(0, 0) == "on" || result.text(0, 1) == "t"
        }
        if readOnly {
            throw PersistenceError(code: .ioFailure, location: location, reason: "the database accepts reads only (a standby, or read-only transactions)")
        }
    }

    // MARK: - Running

    /// Runs `body` on a pooled connection, retried once if the connection was lost or
    /// the server asked for a retry (deadlock, serialization failure).
    func run<T: Sendable>(userID: String?, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        guard !closed.withLock({ $0 }) else {
            throw PersistenceError(code: .closed, location: location, userID: userID, reason: "the persistence was closed")
        }
        do {
            do {
                return try await pool.run(retry: true, body)
            } catch let error as PostgresError where Self.isTransient(error) {
                return try await pool.run(retry: true, body)
            }
        } catch {
            throw persistenceError(error, userID: userID)
        }
    }

    private static func transaction(on connection: PostgresConnection, _ body: () throws -> Void) throws {
        try connection.execute("BEGIN")
        do {
            try body()
            try connection.execute("COMMIT")
        } catch {
            if connection.isOpen { try? connection.execute("ROLLBACK") }
            throw error
        }
    }

    private static func isTransient(_ error: PostgresError) -> Bool {
        // 40001 serialization_failure, 40P01 deadlock_detected.
        error.kind == .statementFailed && (error.sqlState == "40001" || error.sqlState == "40P01")
    }

    func persistenceError(_ error: any Error, userID: String?) -> PersistenceError {
        switch error {
        case let error as PersistenceError:
            return error
        case let error as PostgresSchema.NewerSchema:
            return PersistenceError(code: .unsupportedVersion, location: location,
                                    reason: "the database has schema version \(error.version); this SDK reads up to \(PostgresSchema.currentVersion)")
        case let error as PostgresRows.MissingMoment:
            return PersistenceError.missingMoment(error.momentID, location: location, userID: error.userID)
        case let error as PostgresRows.Damaged:
            return PersistenceError(code: .corruptedData, location: location, userID: error.userID ?? userID, reason: error.reason)
        case let error as PostgresError:
            let code: PersistenceError.Code = switch error.kind {
            case .connectionFailed: .connectionFailed
            case .authenticationFailed: .authenticationFailed
            case .connectionLost: .connectionLost
            case .statementFailed where error.sqlState == "53100" || error.sqlState == "25006": .ioFailure
            case .statementFailed: .databaseFailure
            }
            return PersistenceError(code: code, location: location, userID: userID, reason: error.message, underlyingError: error)
        default:
            return PersistenceError(code: .databaseFailure, location: location, userID: userID, reason: "\(error)", underlyingError: error)
        }
    }
}
