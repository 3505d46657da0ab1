public import Moments
import MomentsCSQLite

/// A ``MomentsPersistence`` in one SQLite database file (or `":memory:"`).
///
/// - WAL journal with `synchronous = NORMAL`: a committed save survives a process crash,
///   and readers never block the writer.
/// - Each save is one `IMMEDIATE` transaction; a busy timeout lets two processes share
///   the file without corrupting it.
/// - One row per moment: ``saveMoment(_:for:)`` (a like) updates one row, not the timeline.
/// - Prepared statements are reused; the schema version lives in `PRAGMA user_version`
///   and is migrated forward on open. A file written by a newer SDK, a file that is not
///   a database, and a foreign database are refused with a ``PersistenceError``.
///
/// The connection is confined to this actor.
///
/// For example:
/// ```swift
/// let persistence = try SQLitePersistence(path: "/var/lib/moments/timelines.sqlite")
/// try await persistence.save(details, for: "0")
/// ```
public actor SQLitePersistence: MomentsPersistence {
    /// How the database is opened.
    public struct Configuration: Sendable {
        /// How long to wait for another connection's write lock before failing.
        /// The default is 5 seconds.
        public var busyTimeout: Duration = .seconds(5)

        /// Creates a configuration with every default.
        public init() {}
    }

    /// The database file, or `":memory:"`.
    public nonisolated let path: String
    private let connection: SQLiteConnection

    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    ///
    /// - Throws: ``PersistenceError`` with ``PersistenceError/Code-swift.struct/corruptedData``
    ///   for a file that is not a Moments database,
    ///   ``PersistenceError/Code-swift.struct/unsupportedVersion`` for one written by a
    ///   newer SDK, and ``PersistenceError/Code-swift.struct/ioFailure`` when it cannot be opened.
    public init(path: String, configuration: Configuration = Configuration()) throws {
        self.path = path
        do {
            let connection = try SQLiteConnection(path: path, busyTimeout: configuration.busyTimeout)
            try Self.prepare(connection)
            self.connection = connection
        } catch let error as SQLiteError {
            throw Self.persistenceError(error, path: path, userID: nil)
        }
    }

    private static func prepare(_ connection: SQLiteConnection) throws {
        // The first read of the file: fails with SQLITE_NOTADB for garbage.
        let version = try connection.integer("PRAGMA user_version")
        if version > SQLiteSchema.currentVersion {
            throw PersistenceError(
                code: .unsupportedVersion, location: connection.path,
                reason: "the database has schema version \(version); this SDK reads up to \(SQLiteSchema.currentVersion)"
            )
        }
        _ = try connection.text("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA synchronous = NORMAL")
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
                try connection.execute(SQLiteSchema.migrations[Int(version)])
                version += 1
                try connection.execute("PRAGMA user_version = \(version)")
            }
        }
    }

    // MARK: - MomentsPersistence

    public func load(userID: String) throws -> MomentsDetails? {
        try run(userID: userID) {
            try connection.transaction(writing: false) { try readTimeline(userID) }
        }
    }

    public func save(_ details: MomentsDetails, for userID: String) throws {
        try run(userID: userID) {
            try connection.transaction(writing: true) {
                let owner = try connection.statement("""
                    INSERT INTO timeline (user_id, owner_id, owner_name, owner_avatar, owner_background)
                    VALUES (?, ?, ?, ?, ?)
                    ON CONFLICT (user_id) DO UPDATE SET owner_id = excluded.owner_id, owner_name = excluded.owner_name,
                        owner_avatar = excluded.owner_avatar, owner_background = excluded.owner_background
                    """)
                owner.bind(userID, at: 1)
                owner.bind(details.userDetails.id, at: 2)
                owner.bind(details.userDetails.name, at: 3)
                owner.bind(details.userDetails.avatar, at: 4)
                owner.bind(details.userDetails.backgroundImage, at: 5)
                try owner.run()

                let clear = try connection.statement("DELETE FROM moment WHERE user_id = ?")
                clear.bind(userID, at: 1)
                try clear.run()

                let insert = try connection.statement("""
                    INSERT INTO moment (user_id, position, id, author_id, author_name, author_avatar, type, title, url,
                        photos, created_date, is_liked, likes)
                    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                    """)
                for (position, moment) in details.moments.enumerated() {
                    insert.bind(userID, at: 1)
                    insert.bind(Int64(position), at: 2)
                    MomentRow.bind(moment, to: insert, from: 3)
                    try insert.run()
                }
            }
        }
    }

    @discardableResult
    public func saveMoment(_ moment: Moment, for userID: String) throws -> Bool {
        try run(userID: userID) {
            let update = try connection.statement("""
                UPDATE moment SET id = ?, author_id = ?, author_name = ?, author_avatar = ?, type = ?, title = ?,
                    url = ?, photos = ?, created_date = ?, is_liked = ?, likes = ?
                WHERE user_id = ? AND id = ?
                """)
            MomentRow.bind(moment, to: update, from: 1)
            update.bind(userID, at: 12)
            update.bind(moment.id, at: 13)
            try update.run()
            return connection.changes > 0
        }
    }

    public func remove(userID: String) throws {
        try run(userID: userID) {
            try connection.transaction(writing: true) {
                for sql in ["DELETE FROM moment WHERE user_id = ?", "DELETE FROM timeline WHERE user_id = ?"] {
                    let statement = try connection.statement(sql)
                    statement.bind(userID, at: 1)
                    try statement.run()
                }
            }
        }
    }

    public func userIDs() throws -> [String] {
        try run(userID: nil) {
            let statement = try connection.statement("SELECT user_id FROM timeline")
            defer { statement.reset() }
            var ids: [String] = []
            while try statement.step() { ids.append(statement.text(at: 0)) }
            return ids
        }
    }

    public func removeAll() throws {
        try run(userID: nil) {
            try connection.transaction(writing: true) {
                try connection.execute("DELETE FROM moment; DELETE FROM timeline;")
            }
        }
    }

    // MARK: - Reading

    private func readTimeline(_ userID: String) throws -> MomentsDetails? {
        let owner = try connection.statement(
            "SELECT owner_id, owner_name, owner_avatar, owner_background FROM timeline WHERE user_id = ?"
        )
        defer { owner.reset() }
        owner.bind(userID, at: 1)
        guard try owner.step() else { return nil }
        let userDetails = UserDetails(
            id: owner.text(at: 0), name: owner.text(at: 1), avatar: owner.text(at: 2), backgroundImage: owner.text(at: 3)
        )

        let rows = try connection.statement("""
            SELECT id, author_id, author_name, author_avatar, type, title, url, photos, created_date, is_liked, likes
            FROM moment WHERE user_id = ? ORDER BY position
            """)
        defer { rows.reset() }
        rows.bind(userID, at: 1)
        var moments: [Moment] = []
        while try rows.step() {
            moments.append(try MomentRow.read(rows, location: connection.path, userID: userID))
        }
        return MomentsDetails(userDetails: userDetails, moments: moments)
    }

    /// Rows changed through this connection since it opened (for tests and diagnostics).
    var connectionTotalChanges: Int { connection.totalChanges }

    // MARK: - Errors

    private func run<T>(userID: String?, _ body: () throws -> T) throws -> T {
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
