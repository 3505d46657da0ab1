public import Moments
import MomentsCSQLite
import MomentsSupport
import Foundation
public import MomentsObservability

/// A `MomentsPersistence` in one SQLite database file (or `":memory:"`).
///
/// - Normalized: one `moment` row per moment id, shared by every timeline that holds
///   it, so a confirmed like updates one row and every timeline sees it.
/// - WAL journal with `synchronous = NORMAL`: a committed save survives a process crash,
///   and readers never block the writer.
/// - Each save is one `IMMEDIATE` transaction; a busy timeout lets two processes share
///   the file without corrupting it.
/// - Every row carries a checksum of its content, verified when read, and text that is
///   not valid UTF-8 is reported: damage is a `PersistenceError` with
///   `.corruptedData`, never data.
/// - Prepared statements are reused; the schema version lives in `PRAGMA user_version`
///   and is migrated forward on open (version 1 files are converted in one
///   transaction). A file written by a newer SDK, a file that is not a database, and a
///   foreign database are refused.
///
/// The connection is confined to this actor, whose work runs on a thread of its own:
/// SQLite's blocking calls (a busy wait can last the whole busy timeout) never occupy
/// Swift's cooperative threads.
///
/// For example:
/// ```swift
/// let persistence = try await SQLitePersistence.open(path: "/var/lib/moments/timelines.sqlite")
/// try await persistence.save(details, for: "0")
/// ```
public actor SQLitePersistence: MomentsPersistence {
    /// How the database is opened.
    public struct Configuration: Sendable {
        /// How long to wait for another connection's write lock before failing.
        /// The default is 5 seconds.
        public var busyTimeout: Duration = .seconds(5)

        /// Receives what the store does on its own: opening for reading only, and
        /// repairing a damaged index. The default is `nil`.
        public var logHandler: LogHandler?

        /// How often the change bus (``sharedChanges()``) looks for commits of other
        /// connections to the file. The default is 50 ms; a look that finds none reads
        /// one pragma.
        public var changePollInterval: Duration = .milliseconds(50)

        /// Creates a configuration with every default.
        public init() {}

        /// Creates a configuration that waits up to `busyTimeout` for a lock.
        public init(busyTimeout: Duration, logHandler: LogHandler? = nil) {
            self.busyTimeout = busyTimeout
            self.logHandler = logHandler
        }
    }

    /// The database file, or `":memory:"`.
    public nonisolated let path: String
    let connection: SQLiteConnection
    /// Names this instance's commits in the change log, so its own bus skips them.
    nonisolated let writerID = UUID().uuidString
    let changePollInterval: Duration
    /// This instance committed a contested moment its own bus has not delivered yet.
    var hasOwnContest = false
    /// The latest commit in the change log this connection knows of (read on opening,
    /// then by every look of a change stream): a new stream delivers every commit after it.
    nonisolated let knownChangeSequence = PThreadMutex<Int64>(0)
    private let executor: ThreadExecutor

    /// The connection's own thread: SQLite's calls and busy waits never run on Swift's cooperative threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens (creating and migrating if needed) the database at `path` on a thread of
    /// its own, never on one of Swift's cooperative threads: the opening may wait up to
    /// the configuration's busy timeout for another process's lock. Use it from async
    /// code; it is ``init(path:configuration:)`` otherwise.
    ///
    /// - Throws: `PersistenceError` as ``init(path:configuration:)`` does.
    public static func open(path: String, configuration: Configuration = Configuration()) async throws -> SQLitePersistence {
        try await runOffThePool(named: "MomentsSQLite.open") { try SQLitePersistence(path: path, configuration: configuration) }
    }

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    ///
    /// - Throws: `PersistenceError` with `.corruptedData`
    ///   for a file that is not a Moments database,
    ///   `.unsupportedVersion` for one written by a
    ///   newer SDK, and `.ioFailure` when it cannot be opened.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        self.logHandler = configuration.logHandler
        changePollInterval = configuration.changePollInterval
        var connection: SQLiteConnection
        var readOnlyReason: String?
        do {
            connection = try SQLiteConnection(path: path, busyTimeout: configuration.busyTimeout)
            try Self.prepare(connection)
        } catch let error as SQLiteError where Self.isAccessFailure(error) {
            // The file cannot be written (read-only file, directory or file system, a
            // full disk): reads may still succeed.
            guard let reader = Self.openForReading(path, busyTimeout: configuration.busyTimeout) else {
                throw Self.persistenceError(error, path: path, userID: nil)
            }
            connection = reader
            readOnlyReason = error.message
        } catch let error as SQLiteError {
            throw Self.persistenceError(error, path: path, userID: nil)
        }
        self.connection = connection
        self.readOnlyReason = readOnlyReason
        // A file opened for reading only may predate the log: then there is none to follow.
        let known = (try? connection.integer("SELECT coalesce(max(seq), 0) FROM change_log")) ?? 0
        knownChangeSequence.withLock { $0 = known }
        executor = ThreadExecutor(name: "MomentsSQLitePersistence")
        if let readOnlyReason {
            configuration.logHandler?(LogRecord(
                level: .warning, message: "the store is open for reading only; saves will fail",
                metadata: ["path": path, "reason": readOnlyReason]
            ))
        }
    }

    /// Why the store is open for reading only (it could not be opened for writing), or
    /// `nil` if it can be written.
    public nonisolated let readOnlyReason: String?

    private let logHandler: LogHandler?

    /// A connection that only reads a current database: shared with writers if SQLite
    /// can, else as an unchanging file.
    private static func openForReading(_ path: String, busyTimeout: Duration) -> SQLiteConnection? {
        for access in [SQLiteConnection.Access.readOnly, .immutable] {
            guard let connection = try? SQLiteConnection(path: path, busyTimeout: busyTimeout, access: access) else { continue }
            guard let version = try? connection.integer("PRAGMA user_version"),
                  version == SQLiteSchema.currentVersion,
                  (try? connection.integer("PRAGMA application_id")) == SQLiteSchema.applicationID
            else { continue }
            return connection
        }
        return nil
    }

    private static func isAccessFailure(_ error: SQLiteError) -> Bool {
        [SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM].contains(error.resultCode)
    }

    /// Throws unless saves can succeed: the store was opened for writing and its file
    /// takes a write lock now. Call it before a side effect that must be stored (the
    /// `moments` tool does before sending a like).
    public func checkWritable() throws {
        try requireWritable()
        try run(userID: nil) {
            try connection.execute("BEGIN IMMEDIATE")
            try connection.execute("ROLLBACK")
        }
    }

    /// `true`: each row keeps when the server computed it and no row is replaced by a
    /// value certainly computed before it, so several processes can share the file (see
    /// `MomentsPersistence.keepsConfirmationIntervals`).
    public nonisolated var keepsConfirmationIntervals: Bool { true }

    /// Closes the database: its connection, file and locks are released, and every
    /// later call throws `PersistenceError.Code.closed`. The thread of
    /// its executor ends when the persistence is released. Idempotent.
    public func close() async {
        connection.close()
    }

    deinit {
        executor.shutDown()
    }

    /// Checks the file and migrates it. A file already at the current version is only
    /// read: opening it takes no write lock.
    private static func prepare(_ connection: SQLiteConnection) throws {
        // The first read of the file: fails with SQLITE_NOTADB for garbage.
        let version = try connection.integer("PRAGMA user_version")
        if version > SQLiteSchema.currentVersion {
            throw PersistenceError(
                code: .unsupportedVersion, location: connection.path,
                reason: "the database has schema version \(version); this SDK reads up to \(SQLiteSchema.currentVersion)"
            )
        }
        try connection.execute("PRAGMA synchronous = NORMAL")
        if version == SQLiteSchema.currentVersion, try connection.integer("PRAGMA application_id") == SQLiteSchema.applicationID {
            return
        }
        // Several processes opening a new file at once each take a read lock and then
        // need the write lock to switch it: SQLite refuses at once rather than wait.
        _ = try connection.textWaitingWhileBusy("PRAGMA journal_mode = WAL")
        try connection.transaction(writing: true) {
            let applicationID = try connection.integer("PRAGMA application_id")
            var version = try connection.integer("PRAGMA user_version")
            if applicationID != SQLiteSchema.applicationID {
                let tables = try connection.integer("SELECT count(*) FROM sqlite_master")
                guard applicationID == 0, version == 0, tables == 0 else {
                    throw PersistenceError(code: .corruptedData, location: connection.path,
                                           reason: "the file is an SQLite database of another application")
                }
                try connection.execute("PRAGMA application_id = \(SQLiteSchema.applicationID)")
            }
            while version < SQLiteSchema.currentVersion {
                for step in SQLiteSchema.migrations[Int(version)] {
                    switch step {
                    case .sql(let sql): try connection.execute(sql)
                    case .code(let body): try body(connection)
                    }
                }
                version += 1
                try connection.execute("PRAGMA user_version = \(version)")
            }
        }
    }

    // MARK: - MomentsPersistence

    /// The timeline saved for `userID`, or `nil` (see `MomentsPersistence`).
    public func load(userID: String) throws -> MomentsDetails? {
        try run(userID: userID) {
            try connection.transaction(writing: false) { try readTimeline(userID) }
        }
    }

    /// Saves `batch` all or nothing (see `MomentsPersistence`).
    public func save(_ batch: PersistenceBatch) throws {
        guard !batch.isEmpty else { return }
        for (userID, timeline) in batch.timelines {
            if let duplicate = timeline.duplicateMomentID {
                throw PersistenceError.duplicateMoment(duplicate, location: path, userID: userID)
            }
        }
        try requireWritable()
        let userID = batch.timelines.count == 1 ? batch.timelines.keys.first : nil
        do {
            try run(userID: userID) { try write(batch) }
        } catch let error as PersistenceError where error.code == .corruptedData {
            // A damaged index (a constraint our own writes cannot break, or SQLite's
            // corruption report) is rebuilt from the table, and the save tried again.
            try run(userID: userID) { try connection.execute("REINDEX") }
            try run(userID: userID) { try write(batch) }
            logHandler?(LogRecord(
                level: .warning, message: "repaired a damaged index (REINDEX) and saved",
                metadata: ["path": path, "userID": userID ?? "", "damage": error.reason]
            ))
        }
    }

    private func write(_ batch: PersistenceBatch) throws {
        do {
            // As stored, to the microsecond, so it compares with stored rows exactly.
            let confirmed = batch.confirmedWithin.flatMap {
                ConfirmationInterval(microsecondsNotBefore: $0.microseconds.notBefore, notAfter: $0.microseconds.notAfter)
            }
            try connection.transaction(writing: true) {
                var released = Set<String>()
                var change = SQLiteChange(writer: writerID)
                for (userID, timeline) in batch.timelines.sorted(by: { $0.key < $1.key }) {
                    let checksum = ContentChecksum.of(timeline, userID: userID)
                    if let stored = try storedTimelineAge(of: userID) {
                        // Another process's certainly newer timeline stays.
                        guard ConfirmationInterval.replaces(confirmed, stored.interval) else { continue }
                        // A different one of unknown order: only the server can settle it.
                        if ConfirmationInterval.overlaps(stored.interval, confirmed), stored.checksum != checksum {
                            change.contestedUserIDs.append(userID)
                        }
                    }
                    released.formUnion(try momentIDs(of: userID))
                    try writeTimeline(timeline, for: userID, batch: batch, confirmedWithin: confirmed, checksum: checksum)
                    change.userIDs.append(userID)
                }
                (change.momentIDs, change.contestedMomentIDs) = try writeMoments(of: batch, confirmedWithin: confirmed)
                try removeOrphans(released)
                try appendChange(change)
                if !change.contestedMomentIDs.isEmpty || !change.contestedUserIDs.isEmpty { hasOwnContest = true }
            }
        } catch let error as SQLiteError where error.resultCode == SQLITE_CONSTRAINT {
            // Every write first deletes the rows it replaces: a uniqueness constraint can
            // fail only on a damaged index.
            throw PersistenceError(code: .corruptedData, location: path, userID: batch.timelines.count == 1 ? batch.timelines.keys.first : nil,
                                   reason: "an index of the database is damaged (\(error.message))", underlyingError: error)
        }
    }

    private func requireWritable() throws {
        if let readOnlyReason {
            throw PersistenceError(code: .ioFailure, location: path, reason: "the store is open for reading only: \(readOnlyReason)")
        }
    }

    /// The users whose saved timelines hold `momentID`.
    public func userIDs(holding momentID: String) throws -> [String] {
        try run(userID: nil) {
            let statement = try connection.statement("SELECT user_id FROM timeline_entry WHERE moment_id = ?")
            defer { statement.reset() }
            statement.bind(momentID, at: 1)
            var ids: [String] = []
            while try statement.step() { ids.append(statement.text(at: 0)) }
            return ids
        }
    }

    /// Removes `userID`'s timeline and the moments no other timeline holds.
    public func remove(userID: String) throws {
        try requireWritable()
        try run(userID: userID) {
            try connection.transaction(writing: true) {
                let released = try momentIDs(of: userID)
                for sql in ["DELETE FROM timeline_entry WHERE user_id = ?", "DELETE FROM timeline WHERE user_id = ?"] {
                    let statement = try connection.statement(sql)
                    statement.bind(userID, at: 1)
                    try statement.run()
                }
                try removeOrphans(Set(released))
                try appendChange(SQLiteChange(writer: writerID, removedUserIDs: [userID]))
            }
        }
    }

    /// Every user with a saved timeline.
    public func userIDs() throws -> [String] {
        try run(userID: nil) {
            let statement = try connection.statement("SELECT user_id FROM timeline")
            defer { statement.reset() }
            var ids: [String] = []
            while try statement.step() { ids.append(statement.text(at: 0)) }
            return ids
        }
    }

    /// Removes every timeline and moment.
    public func removeAll() throws {
        try requireWritable()
        try run(userID: nil) {
            try connection.transaction(writing: true) {
                try connection.execute("DELETE FROM timeline_entry; DELETE FROM moment; DELETE FROM timeline;")
                try appendChange(SQLiteChange(writer: writerID, removedEverything: true))
            }
        }
    }

    // MARK: - Errors

    func run<T>(userID: String?, _ body: () throws -> T) throws -> T {
        guard !connection.isClosed else {
            throw PersistenceError(code: .closed, location: path, userID: userID, reason: "the store was closed")
        }
        do {
            return try body()
        } catch let error as SQLiteError {
            throw Self.persistenceError(error, path: path, userID: userID)
        }
    }

    static func persistenceError(_ error: SQLiteError, path: String, userID: String?) -> PersistenceError {
        let code: PersistenceError.Code
        switch error.resultCode {
        case SQLITE_CORRUPT, SQLITE_NOTADB: code = .corruptedData
        case SQLITE_FULL, SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM: code = .ioFailure
        default: code = .databaseFailure
        }
        return PersistenceError(code: code, location: path, userID: userID, reason: error.description, underlyingError: error)
    }
}
