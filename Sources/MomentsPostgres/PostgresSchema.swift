/// The database layout and its migrations.
///
/// Tables are prefixed `moments_`, so they can live beside an application's own. The
/// version lives in `moments_schema`; migrations run in one transaction under an
/// advisory lock, so instances starting together migrate once.
///
/// Version 1: one `moments_moment` row per moment id (its JSON, `isLiked` left out —
/// `json`, not `jsonb`, which cannot hold the escaped NUL an id may contain — and
/// when the server confirmed it, in microseconds since 1970), shared by every timeline
/// that holds it; `moments_timeline` holds each owner's details; `moments_timeline_entry`
/// lists each user's moment ids in order. Ids are stored as ``StoredID`` writes them.
///
/// Version 2: `moments_moment.like_confirmations`, the answers to likes a moment's row
/// keeps until a certainly newer write (a JSON array of `LikeConfirmation`; `NULL` for
/// none).
enum PostgresSchema {
    /// Taken with `pg_advisory_xact_lock` while migrating ("MOMT").
    static let migrationLock: Int64 = 0x4D4F_4D54

    /// Migration *n* brings a database from version *n* to *n + 1*.
    static let migrations: [String] = [
        """
        CREATE TABLE moments_moment (
            id text PRIMARY KEY,
            value json NOT NULL,
            confirmed_not_before bigint,
            confirmed_not_after bigint
        );
        CREATE TABLE moments_timeline (
            user_id text PRIMARY KEY,
            owner json NOT NULL,
            confirmed_not_before bigint,
            confirmed_not_after bigint
        );
        CREATE TABLE moments_timeline_entry (
            user_id text NOT NULL,
            position integer NOT NULL,
            moment_id text NOT NULL,
            is_liked boolean,
            PRIMARY KEY (user_id, position)
        );
        CREATE UNIQUE INDEX moments_timeline_entry_by_moment ON moments_timeline_entry (moment_id, user_id);
        """,
        "ALTER TABLE moments_moment ADD COLUMN like_confirmations json",
    ]

    /// The version this SDK writes.
    static var currentVersion: Int { migrations.count }

    /// Brings the database to ``currentVersion``.
    ///
    /// - Throws: ``PostgresSchema/NewerSchema`` if the database is newer than this SDK.
    static func migrate(_ connection: PostgresConnection) throws {
        try connection.execute("CREATE TABLE IF NOT EXISTS moments_schema (version integer NOT NULL)")
        if try version(connection) == currentVersion { return }
        try connection.execute("BEGIN")
        do {
            try connection.query("SELECT pg_advisory_xact_lock($1)", [String(migrationLock)])
            var version = try self.version(connection)
            if version > currentVersion { throw NewerSchema(version: version) }
            while version < currentVersion {
                try connection.execute(migrations[version])
                version += 1
            }
            try connection.execute("DELETE FROM moments_schema")
            try connection.query("INSERT INTO moments_schema (version) VALUES ($1)", [String(version)])
            try connection.execute("COMMIT")
        } catch {
            try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The database's version (0 for none).
    static func version(_ connection: PostgresConnection) throws -> Int {
        let result = try connection.query("SELECT max(version) FROM moments_schema")
        return result.text(0, 0).flatMap { Int($0) } ?? 0
    }

    /// The database was written by a newer SDK.
    struct NewerSchema: Error {
        let version: Int
    }
}
