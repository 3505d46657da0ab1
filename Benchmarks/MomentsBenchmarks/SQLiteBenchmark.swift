import Foundation
import Moments
import MomentsCSQLite
import MomentsSQLite

/// `SQLitePersistence` beside raw sqlite3 calls (prepared statements, one transaction)
/// writing and reading the same rows in the same schema.
enum SQLiteBenchmark {
    static func run() async throws -> [Row] {
        var rows: [Row] = []
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("moments-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        for count in [100, 10_000] {
            let details = BenchmarkData.timeline(moments: count)
            let sdk = try SQLitePersistence(path: directory.appendingPathComponent("sdk-\(count).sqlite").path)
            let raw = try RawSQLite(path: directory.appendingPathComponent("raw-\(count).sqlite").path)
            let prepared = RawSQLite.rows(of: details)
            let saves = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { try await sdk.save(details, for: "0"); return count } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.save(prepared, owner: details.userDetails, for: "0"); return count } }
            )
            rows.append(Harness.row("SQLite save, \(count) moments", unit: "rows/s", saves, target: 0.50))
            let loads = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { _ = try await sdk.load(userID: "0"); return count } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.load("0"); return count } }
            )
            rows.append(Harness.row("SQLite load, \(count) moments", unit: "rows/s", loads, target: nil, note: "report only"))
            if count == 10_000 {
                var liked = details.moments[5_000]
                liked.isLiked = true
                let likedRow = RawSQLite.rows(of: MomentsDetails(userDetails: details.userDetails, moments: [liked]))[0]
                let likes = try await Harness.compare(
                    sdk: { try await Harness.rate(for: Harness.roundDuration) { try await sdk.save(PersistenceBatch(moments: [liked])); return 1 } },
                    baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.update(likedRow, for: "0"); return 1 } }
                )
                rows.append(Harness.row("SQLite like (one row of 10,000)", unit: "likes/s", likes, target: nil,
                                        note: String(format: "%.1f µs per like", 1e6 / likes.sdk)))
            }
        }
        return rows
    }
}

/// The baseline: the same schema and pragmas, driven with raw C calls.
final class RawSQLite {
    private var db: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    init(path: String) throws {
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw BenchmarkFailure("open failed") }
        try exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        // Schema 2, as SQLitePersistence writes it: one row per moment, shared.
        try exec("""
            CREATE TABLE timeline (user_id TEXT NOT NULL PRIMARY KEY, owner_id TEXT NOT NULL, owner_name TEXT NOT NULL,
                owner_avatar TEXT NOT NULL, owner_background TEXT NOT NULL, checksum INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE TABLE moment (id TEXT NOT NULL PRIMARY KEY, author_id TEXT NOT NULL, author_name TEXT NOT NULL,
                author_avatar TEXT NOT NULL, type TEXT NOT NULL, title TEXT, url TEXT, photos TEXT NOT NULL,
                created_date TEXT NOT NULL, likes TEXT, checksum INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE timeline_entry (user_id TEXT NOT NULL, position INTEGER NOT NULL, moment_id TEXT NOT NULL,
                is_liked INTEGER, PRIMARY KEY (user_id, position)) WITHOUT ROWID;
            CREATE UNIQUE INDEX timeline_entry_by_moment ON timeline_entry (moment_id, user_id);
            """)
    }

    deinit {
        statements.values.forEach { sqlite3_finalize($0) }
        sqlite3_close_v2(db)
    }

    /// Column values, encoded once up front (the baseline does no model work).
    typealias MomentRow = [String?]

    static func rows(of details: MomentsDetails) -> [MomentRow] {
        details.moments.map { moment in
            [moment.id, moment.userDetails.id, moment.userDetails.name, moment.userDetails.avatar, moment.type.rawValue,
             moment.title, moment.url, moment.photos.map { "\($0.utf8.count):\($0)" }.joined(), moment.createdDate,
             moment.isLiked.map { $0 ? "1" : "0" }, moment.likes.map { $0.flatMap { [$0.id, $0.avatar] }.map { "\($0.utf8.count):\($0)" }.joined() }]
        }
    }

    func save(_ rows: [MomentRow], owner: UserDetails, for user: String) throws {
        try exec("BEGIN IMMEDIATE")
        let upsert = try statement("INSERT INTO timeline VALUES (?, ?, ?, ?, ?, 0) ON CONFLICT (user_id) DO UPDATE SET owner_id = excluded.owner_id, owner_name = excluded.owner_name, owner_avatar = excluded.owner_avatar, owner_background = excluded.owner_background")
        bind(upsert, [user, owner.id, owner.name, owner.avatar, owner.backgroundImage])
        try step(upsert)
        let clear = try statement("DELETE FROM timeline_entry WHERE user_id = ?")
        bind(clear, [user])
        try step(clear)
        let entry = try statement("INSERT INTO timeline_entry VALUES (?, ?, ?, ?)")
        let moment = try statement("INSERT INTO moment VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0) ON CONFLICT (id) DO UPDATE SET author_id = excluded.author_id, author_name = excluded.author_name, author_avatar = excluded.author_avatar, type = excluded.type, title = excluded.title, url = excluded.url, photos = excluded.photos, created_date = excluded.created_date, likes = excluded.likes")
        for (position, row) in rows.enumerated() {
            bind(entry, [user, String(position), row[0], row[9]])
            try step(entry)
            bind(moment, Array(row[0...8]) + [row[10]])
            try step(moment)
        }
        try exec("COMMIT")
    }

    func update(_ row: MomentRow, for user: String) throws {
        let update = try statement("UPDATE moment SET author_id = ?, author_name = ?, author_avatar = ?, type = ?, title = ?, url = ?, photos = ?, created_date = ?, likes = ? WHERE id = ?")
        bind(update, Array(row[1...8]) + [row[10], row[0]])
        try step(update)
    }

    func load(_ user: String) throws {
        try exec("BEGIN")
        let owner = try statement("SELECT owner_id, owner_name, owner_avatar, owner_background FROM timeline WHERE user_id = ?")
        bind(owner, [user])
        var strings: [String?] = []
        while sqlite3_step(owner) == SQLITE_ROW { for column in Int32(0)..<4 { strings.append(text(owner, column)) } }
        sqlite3_reset(owner)
        let select = try statement("SELECT m.id, m.author_id, m.author_name, m.author_avatar, m.type, m.title, m.url, m.photos, m.created_date, e.is_liked, m.likes FROM timeline_entry e JOIN moment m ON m.id = e.moment_id WHERE e.user_id = ? ORDER BY e.position")
        bind(select, [user])
        var rows: [[String?]] = []
        while sqlite3_step(select) == SQLITE_ROW { rows.append((0..<11).map { text(select, Int32($0)) }) }
        sqlite3_reset(select)
        try exec("COMMIT")
        precondition(!rows.isEmpty)
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
        guard let bytes = sqlite3_column_text(statement, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }

    private func bind(_ statement: OpaquePointer, _ values: [String?]) {
        for (index, value) in values.enumerated() {
            if let value {
                sqlite3_bind_text(statement, Int32(index + 1), value, -1, moments_sqlite_transient())
            } else {
                sqlite3_bind_null(statement, Int32(index + 1))
            }
        }
    }

    private func step(_ statement: OpaquePointer) throws {
        defer { sqlite3_reset(statement) }
        guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkFailure(String(cString: sqlite3_errmsg(db))) }
    }

    private func statement(_ sql: String) throws -> OpaquePointer {
        if let cached = statements[sql] { return cached }
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkFailure(String(cString: sqlite3_errmsg(db)))
        }
        statements[sql] = statement
        return statement
    }

    private func exec(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw BenchmarkFailure(String(cString: sqlite3_errmsg(db))) }
    }
}
