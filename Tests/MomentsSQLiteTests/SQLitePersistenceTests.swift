import Foundation
import Moments
import MomentsCSQLite
@testable import MomentsSQLite
import MomentsTestSupport
import Testing

@Suite struct SQLitePersistenceTests {
    let directory: TemporaryDirectory
    let path: String

    init() throws {
        directory = try TemporaryDirectory()
        path = directory.url.appendingPathComponent("moments.sqlite").path
    }

    /// Runs raw SQL on the file, outside the SDK.
    private func raw(_ sql: String) throws {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open(path, &db) == SQLITE_OK, sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw SQLiteError(resultCode: sqlite3_errcode(db), connection: db, statement: sql)
        }
    }

    @Test func aFileThatIsNotADatabaseIsCorruptedDataNamingIt() throws {
        defer { directory.remove() }
        try Data(repeating: 0x42, count: 8192).write(to: URL(fileURLWithPath: path))

        let error = #expect(throws: PersistenceError.self) { try SQLitePersistence(path: path) }

        #expect(error?.code == .corruptedData)
        #expect(error?.location == path)
        #expect((error?.underlyingError as? SQLiteError)?.resultCode == SQLITE_NOTADB)
    }

    @Test func aDatabaseFromANewerVersionIsRefused() async throws {
        defer { directory.remove() }
        _ = try SQLitePersistence(path: path)
        try raw("PRAGMA user_version = 42")

        let error = #expect(throws: PersistenceError.self) { try SQLitePersistence(path: path) }

        #expect(error?.code == .unsupportedVersion)
        #expect(error?.reason.contains("42") == true)
    }

    @Test func aForeignDatabaseIsRefusedAndLeftAlone() throws {
        defer { directory.remove() }
        try raw("CREATE TABLE invoices (id INTEGER PRIMARY KEY); INSERT INTO invoices VALUES (7);")

        let error = #expect(throws: PersistenceError.self) { try SQLitePersistence(path: path) }

        #expect(error?.code == .corruptedData)
        #expect(error?.reason.contains("another application") == true)
        try raw("SELECT id FROM invoices")
    }

    @Test func reopeningMigratesOnceAndKeepsData() async throws {
        defer { directory.remove() }
        let details = SampleTimelines.timeline(user: "0", moments: 5)
        try await SQLitePersistence(path: path).save(details, for: "0")

        let reopened = try SQLitePersistence(path: path)

        #expect(try await reopened.load(userID: "0") == details)
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        #expect(try connection.integer("PRAGMA user_version") == SQLiteSchema.currentVersion)
        #expect(try connection.text("PRAGMA journal_mode") == "wal")
    }

    @Test func aLikeUpdatesOneRowNotTheTimeline() async throws {
        defer { directory.remove() }
        let persistence = try SQLitePersistence(path: path)
        let details = SampleTimelines.timeline(user: "big", moments: 5_000)
        try await persistence.save(details, for: "big")
        var liked = details.moments[4_321]
        liked.isLiked = true
        liked.likes = (liked.likes ?? []) + [Moment.LikedUser(id: "big", avatar: "a")]

        let before = await persistence.connectionTotalChanges
        try await persistence.save(PersistenceBatch(moments: [liked]))
        let rowsWritten = await persistence.connectionTotalChanges - before

        // The moment's row, and the commit's entry in the change log other connections read.
        #expect(rowsWritten == 2)
        // The moment's row changed; the owner's isLiked, kept with the timeline, did not.
        #expect(try await persistence.load(userID: "big")?.moments[4_321] == liked.withIsLiked(details.moments[4_321].isLiked))
    }

    @Test func errorsKeepCodeMessageAndStatementButNeverBoundValues() throws {
        defer { directory.remove() }
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        try connection.execute("CREATE TABLE t (v TEXT NOT NULL UNIQUE)")
        let insert = try connection.statement("INSERT INTO t (v) VALUES (?)")
        insert.bind("secret-value-123", at: 1)
        try insert.run()
        insert.bind("secret-value-123", at: 1)

        let error = #expect(throws: SQLiteError.self) { try insert.run() }

        #expect(error?.resultCode == SQLITE_CONSTRAINT)
        #expect(error?.statement == "INSERT INTO t (v) VALUES (?)")
        #expect(error?.message.contains("UNIQUE") == true)
        #expect(error?.description.contains("secret-value-123") == false)
    }

    @Test func twoProcessesWritingOneFileDoNotCorruptIt() async throws {
        defer { directory.remove() }
        _ = try SQLitePersistence(path: path)
        var readers: [LineReader] = []
        let writers = try (0..<2).map { index in
            let process = Process()
            process.discardingCoverageProfile()
            process.executableURL = CrashHarness.writerURL
            process.arguments = ["sqlite", path, "3", String(1 + index * 1_000_000)]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            readers.append(LineReader(output.fileHandleForReading))
            return process
        }
        // Both writers commit 200 timelines each, contending for the file's lock.
        for reader in readers {
            var commits = 0
            for await line in reader.lines where !line.hasPrefix("> ") {
                commits += 1
                if commits == 200 { break }
            }
            #expect(commits == 200, "a writer stopped after \(commits) commits, likely of SQLITE_BUSY")
        }
        for writer in writers {
            #expect(writer.isRunning, "a writer died, likely of SQLITE_BUSY")
            writer.terminate()
            _ = await writer.exitStatus()
        }

        let persistence = try SQLitePersistence(path: path)
        for user in try await persistence.userIDs() {
            let details = try #require(try await persistence.load(userID: user))
            #expect(CrashTimeline.version(of: details, user: user) != nil, "\(user) is torn")
        }
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        #expect(try connection.text("PRAGMA integrity_check") == "ok")
    }

    @Test func surviveSIGKILLInTheMiddleOfAWriteLoop() async throws {
        defer { directory.remove() }
        var version = 1
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<5 {
            let saves = try await CrashHarness.round(kind: "sqlite", path: path, users: 4, startVersion: version, using: &generator) {
                try SQLitePersistence(path: path)
            }
            version += 10_000
            #expect(saves > 0)
        }
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        #expect(try connection.text("PRAGMA integrity_check") == "ok")
    }
}

@Suite struct SQLitePersistenceFullDiskTests {
    @Test func aWriteThatRunsOutOfSpaceIsTypedAndLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("full.sqlite").path

        let result = try await FullDisk.run(kind: "sqlite", path: path, limit: 256 * 1024)

        #expect(result.status == 0)
        #expect(result.lines == ["small saved", "large failed I/O failure", "small intact"])
        // Reopened without the limit: the last committed timeline, and an intact file.
        #expect(try await SQLitePersistence(path: path).load(userID: "u") == SampleTimelines.timeline(user: "u", moments: 2))
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        #expect(try connection.text("PRAGMA integrity_check") == "ok")
    }
}
