/// The database layout and its migrations.
///
/// The version lives in `PRAGMA user_version`; `PRAGMA application_id` marks a database
/// as ours, so a foreign SQLite file is refused rather than written into.
enum SQLiteSchema {
    /// "MOMT".
    static let applicationID: Int64 = 0x4D4F_4D54

    /// Migration *n* brings a database from version *n* to *n + 1*.
    static let migrations: [String] = [
        """
        CREATE TABLE timeline (
            user_id TEXT NOT NULL PRIMARY KEY,
            owner_id TEXT NOT NULL,
            owner_name TEXT NOT NULL,
            owner_avatar TEXT NOT NULL,
            owner_background TEXT NOT NULL
        ) WITHOUT ROWID;
        CREATE TABLE moment (
            user_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            id TEXT NOT NULL,
            author_id TEXT NOT NULL,
            author_name TEXT NOT NULL,
            author_avatar TEXT NOT NULL,
            type TEXT NOT NULL,
            title TEXT,
            url TEXT,
            photos TEXT NOT NULL,
            created_date TEXT NOT NULL,
            is_liked INTEGER,
            likes TEXT,
            PRIMARY KEY (user_id, position)
        ) WITHOUT ROWID;
        CREATE INDEX moment_by_id ON moment (user_id, id);
        """,
    ]

    /// The version this SDK writes.
    static var currentVersion: Int64 { Int64(migrations.count) }
}
