/// The database layout and its migrations.
///
/// The version lives in `PRAGMA user_version`; `PRAGMA application_id` marks a database
/// as ours, so a foreign SQLite file is refused rather than written into.
///
/// Version 2 is normalized: one `moment` row per moment id, shared by every timeline
/// that holds it; `timeline_entry` lists each user's moment ids in order. Every
/// `moment` and `timeline` row carries a checksum of its content. Version 3 lets a
/// moment's author id be unknown, and keeps with each row when the server computed it
/// and with each moment the answers to likes (the rules of shared storage). Version 4
/// logs each commit's changes for the other connections' change bus.
enum SQLiteSchema {
    /// "MOMT".
    static let applicationID: Int64 = 0x4D4F_4D54

    /// One step of a migration: SQL, or work that needs Swift (computing checksums).
    enum Step: Sendable {
        case sql(String)
        case code(@Sendable (SQLiteConnection) throws -> Void)
    }

    /// Migration *n* brings a database from version *n* to *n + 1*.
    static let migrations: [[Step]] = [
        [.sql("""
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
            """)],
        [
            .sql("""
                CREATE TABLE moment_record (
                    id TEXT NOT NULL PRIMARY KEY,
                    author_id TEXT NOT NULL,
                    author_name TEXT NOT NULL,
                    author_avatar TEXT NOT NULL,
                    type TEXT NOT NULL,
                    title TEXT,
                    url TEXT,
                    photos TEXT NOT NULL,
                    created_date TEXT NOT NULL,
                    likes TEXT,
                    checksum INTEGER NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE timeline_entry (
                    user_id TEXT NOT NULL,
                    position INTEGER NOT NULL,
                    moment_id TEXT NOT NULL,
                    is_liked INTEGER,
                    PRIMARY KEY (user_id, position)
                ) WITHOUT ROWID;
                CREATE UNIQUE INDEX timeline_entry_by_moment ON timeline_entry (moment_id, user_id);
                INSERT OR REPLACE INTO moment_record
                    SELECT id, author_id, author_name, author_avatar, type, title, url, photos, created_date, likes, 0
                    FROM moment ORDER BY user_id, position;
                INSERT OR IGNORE INTO timeline_entry SELECT user_id, position, id, is_liked FROM moment ORDER BY user_id, position;
                DROP TABLE moment;
                ALTER TABLE moment_record RENAME TO moment;
                ALTER TABLE timeline ADD COLUMN checksum INTEGER NOT NULL DEFAULT 0;
                """),
            .code { connection in try SQLiteRows.recomputeChecksums(connection) },
        ],
        // Version 3: a moment's author id may be unknown (`NULL`), and several processes
        // share one file under the ordering rule of shared storage: each moment and
        // timeline row keeps when the server computed it (microseconds since 1970), and
        // each moment the answers to likes it keeps (a JSON array of `LikeConfirmation`).
        // Checksums (of content only) are unchanged.
        [.sql("""
            CREATE TABLE moment_v3 (
                id TEXT NOT NULL PRIMARY KEY,
                author_id TEXT,
                author_name TEXT NOT NULL,
                author_avatar TEXT NOT NULL,
                type TEXT NOT NULL,
                title TEXT,
                url TEXT,
                photos TEXT NOT NULL,
                created_date TEXT NOT NULL,
                likes TEXT,
                checksum INTEGER NOT NULL,
                confirmed_not_before INTEGER,
                confirmed_not_after INTEGER,
                like_confirmations TEXT
            ) WITHOUT ROWID;
            INSERT INTO moment_v3 (id, author_id, author_name, author_avatar, type, title, url, photos, created_date, likes, checksum)
                SELECT id, author_id, author_name, author_avatar, type, title, url, photos, created_date, likes, checksum FROM moment;
            DROP TABLE moment;
            ALTER TABLE moment_v3 RENAME TO moment;
            ALTER TABLE timeline ADD COLUMN confirmed_not_before INTEGER;
            ALTER TABLE timeline ADD COLUMN confirmed_not_after INTEGER;
            """)],
        // Version 4: every save and removal appends what it changed to `change_log`, so
        // other connections to the file (other processes) learn of it (the change bus).
        // Lists are `StringListCoding`; `writer` names the persistence instance. Only the
        // oldest rows are ever deleted, so `seq` (the rowid) only grows.
        [.sql("""
            CREATE TABLE change_log (
                seq INTEGER PRIMARY KEY,
                writer TEXT NOT NULL,
                moment_ids TEXT NOT NULL,
                user_ids TEXT NOT NULL,
                contested_moment_ids TEXT NOT NULL,
                removed_user_ids TEXT NOT NULL,
                removed_everything INTEGER NOT NULL
            );
            """)],
        // Version 5: a commit also names the timelines it contested (it replaced a
        // different owner, list or `isLiked` of unknown order against its own), so every
        // instance asks the server again, as for contested moments.
        [.sql("""
            ALTER TABLE change_log ADD COLUMN contested_user_ids TEXT NOT NULL DEFAULT '';
            """)],
    ]

    /// The version this SDK writes.
    static var currentVersion: Int64 { Int64(migrations.count) }
}
