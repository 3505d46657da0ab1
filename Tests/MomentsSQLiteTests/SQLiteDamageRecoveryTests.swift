import Foundation
import Moments
import MomentsCSQLite
import MomentsNetworking
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability

/// Reads are never refused when they could succeed; index damage is classified and
/// repaired; a store that cannot be written says so before any side effect.
@Suite struct SQLiteDamageRecoveryTests {
    private func makeStore(_ directory: TemporaryDirectory) async throws -> String {
        let path = directory.url.appendingPathComponent("moments.sqlite").path
        let persistence = try SQLitePersistence(path: path)
        try await persistence.save(SampleTimelines.timeline(user: "u", moments: 2), for: "u")
        try await persistence.save(SampleTimelines.timeline(user: "other", moments: 2), for: "other")
        return path
    }

    /// A store closed cleanly (no -wal, no -shm) on a disk where nothing can grow.
    @Test func aFullDiskStillAllowsReadsAndSavesFailTyped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await makeStore(directory)
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }
        #expect(leftovers.isEmpty, "the store was not closed cleanly: \(leftovers)")

        let result = try await FullDisk.readWhenFull(kind: "sqlite", path: path)

        #expect(result.status == 0)
        #expect(result.lines.contains("read 2 moments"), "\(result.lines)")
        #expect(result.lines.contains("save failed I/O failure"), "\(result.lines)")
        #expect(try await SQLitePersistence(path: path).load(userID: "u") == SampleTimelines.timeline(user: "u", moments: 2))
    }

    @Test func aDamagedIndexIsCorruptionAndIsRepairedByTheNextSave() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await makeStore(directory)
        // Damage the index over timeline entries as a lost page would: it no longer
        // holds the table's rows.
        try corruptIndex(path)
        #expect(try withRawConnection(path) { db in try text(db, "PRAGMA integrity_check") } != "ok")

        let records = PThreadMutex<[LogRecord]>([])
        let persistence = try SQLitePersistence(path: path, configuration: .init(busyTimeout: .seconds(5)) { record in
            records.withLock { $0.append(record) }
        })
        try await persistence.save(SampleTimelines.timeline(user: "u", moments: 3), for: "u")

        #expect(try await persistence.load(userID: "u") == SampleTimelines.timeline(user: "u", moments: 3))
        #expect(try await persistence.load(userID: "other") == SampleTimelines.timeline(user: "other", moments: 2))
        #expect(records.withLock { $0 }.contains { $0.message.contains("REINDEX") }, "the repair is logged")
        #expect(try withRawConnection(path) { db in try text(db, "PRAGMA integrity_check") } == "ok")
    }

    @Test func aStoreThatCannotTakeAWriteLockFailsCheckWritable() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = try await makeStore(directory)
        let persistence = try SQLitePersistence(path: path, configuration: .init(busyTimeout: .milliseconds(50)))
        try await persistence.checkWritable()

        try await withRawConnection(path) { db in
            try exec(db, "BEGIN EXCLUSIVE")
            let error = await #expect(throws: PersistenceError.self) { try await persistence.checkWritable() }
            #expect(error?.code == .databaseFailure || error?.code == .ioFailure)
            // Reads go on while another connection writes (WAL).
            #expect(try await persistence.load(userID: "u") != nil)
            try exec(db, "ROLLBACK")
        }
    }

    // MARK: Raw SQLite, to damage files as a disk would

    /// Points the index over timeline entries at an empty b-tree, so every row of the
    /// table is missing from it (what `integrity_check` reports after a lost page).
    private func corruptIndex(_ path: String) throws {
        try withRawConnection(path) { db in
            try exec(db, "PRAGMA wal_checkpoint(TRUNCATE)")
            try exec(db, "CREATE TABLE scratch (a, b); CREATE INDEX scratch_index ON scratch (a, b)")
            let damaged = try integer(db, "SELECT rootpage FROM sqlite_master WHERE name = 'timeline_entry_by_moment'")
            let empty = try integer(db, "SELECT rootpage FROM sqlite_master WHERE name = 'scratch_index'")
            #expect(damaged > 0 && empty > 0)
            try exec(db, "PRAGMA writable_schema = ON")
            try exec(db, "UPDATE sqlite_master SET rootpage = \(empty) WHERE name = 'timeline_entry_by_moment'")
            try exec(db, "UPDATE sqlite_master SET rootpage = \(damaged) WHERE name = 'scratch_index'")
            try exec(db, "PRAGMA writable_schema = OFF")
        }
    }

    private func withRawConnection<T>(_ path: String, _ body: (OpaquePointer) async throws -> T) async throws -> T {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw RawError(message: "open") }
        defer { sqlite3_close(db) }
        return try await body(db)
    }

    private func withRawConnection<T>(_ path: String, _ body: (OpaquePointer) throws -> T) throws -> T {
        var db: OpaquePointer?
        guard sqlite3_open(path, &db) == SQLITE_OK, let db else { throw RawError(message: "open") }
        defer { sqlite3_close(db) }
        return try body(db)
    }

    struct RawError: Error { let message: String }

    private func exec(_ db: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
    }

    private func integer(_ db: OpaquePointer, _ sql: String) throws -> Int {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : 0
    }

    private func text(_ db: OpaquePointer, _ sql: String) throws -> String {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else { throw RawError(message: String(cString: sqlite3_errmsg(db))) }
        defer { sqlite3_finalize(statement) }
        guard sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0) else { return "" }
        return String(cString: text)
    }
}
