import Foundation
import Moments
import MomentsCSQLite
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// One flipped byte at each kind of place a disk can damage, in a SQLite store and in a
/// JSON-file store. The rule for every case: a load returns a state that was committed
/// for that user, or a typed ``PersistenceError``; never other data, never a crash. The
/// places where damage must be *detected* (`mustDetect`) may not return data at all.
/// The table is in RELIABILITY.md.
@Suite(.ownThread) struct ByteFlipTests {
    enum Place: String, CaseIterable, Sendable {
        case sqliteHeader = "SQLite header (page size)"
        case sqliteSchemaPage = "SQLite schema page (b-tree page type)"
        case sqliteIndexPage = "SQLite index page (a key byte)"
        case sqliteDataTextStaysValid = "SQLite data page, a text byte that stays valid UTF-8"
        case sqliteDataTextInvalid = "SQLite data page, a text byte made invalid UTF-8"
        case sqliteDataNumber = "SQLite data page, a digit of a date"
        case sqliteWALFrame = "SQLite WAL frame (the newest save, not yet checkpointed)"
        case jsonStructure = "JSON file, a structural character"
        case jsonValue = "JSON file, a letter inside a value"

        var mustDetect: Bool {
            switch self {
            case .sqliteIndexPage, .sqliteWALFrame: false
            default: true
            }
        }
    }

    static let first = SampleTimelines.timeline(user: "u", moments: 6, version: 1)
    static let second = SampleTimelines.timeline(user: "u", moments: 6, version: 2)

    @Test(arguments: Place.allCases)
    func aFlippedByteIsDetectedOrHarmless(place: Place) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let outcome: Result<MomentsDetails?, any Error>
        if place.rawValue.hasPrefix("JSON") {
            let store = directory.url.appendingPathComponent("store")
            try await JSONFilePersistence(directory: store).save(Self.first, for: "u")
            let file = try #require(try FileManager.default.contentsOfDirectory(at: store, includingPropertiesForKeys: nil)
                .first { $0.pathExtension == "json" })
            var bytes = try Data(contentsOf: file)
            let offset = try #require(place == .jsonStructure ? Self.offset(of: "\"moments\"", in: bytes) : Self.offset(of: "title 1", in: bytes).map { $0 + 1 })
            bytes[offset] ^= place == .jsonStructure ? 0x02 : 0x01
            try bytes.write(to: file)
            outcome = await Result(catching: { try await JSONFilePersistence(directory: store).load(userID: "u") })
        } else {
            let path = directory.url.appendingPathComponent("s.sqlite").path
            outcome = try await sqliteOutcome(place, path: path)
        }

        if ProcessInfo.processInfo.environment["MOMENTS_FLIP_REPORT"] != nil {
            let said: String
            switch outcome {
            case .success(let loaded): said = loaded == Self.second ? "newest state" : loaded == Self.first ? "earlier committed state" : "nothing stored"
            case .failure(let error): said = "\(error)"
            }
            FileHandle.standardError.write(Data("flip: \(place.rawValue) → \(said)\n".utf8))
        }
        switch outcome {
        case .success(let loaded):
            #expect(!place.mustDetect, "\(place.rawValue): damage served as data")
            #expect(loaded == nil || loaded == Self.first || loaded == Self.second, "\(place.rawValue): a state never committed")
        case .failure(let error):
            #expect(error is PersistenceError, "\(place.rawValue): untyped \(error)")
            if place.mustDetect, let error = error as? PersistenceError {
                #expect(error.code == .corruptedData, "\(place.rawValue): \(error)")
            }
        }
    }

    private func sqliteOutcome(_ place: Place, path: String) async throws -> Result<MomentsDetails?, any Error> {
        do {
            let persistence = try SQLitePersistence(path: path)
            try await persistence.save(Self.first, for: "u")
        } // closed: checkpointed, no -wal left
        if place == .sqliteWALFrame {
            // Keep a reader open so the second save stays in the WAL, copy both files,
            // and damage the copy's newest frame.
            let holder = try SQLitePersistence(path: path)
            try await holder.save(Self.second, for: "u")
            let copy = path + ".copy"
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            var wal = try Data(contentsOf: URL(fileURLWithPath: copy + "-wal"))
            #expect(wal.count > 100)
            wal[wal.count - 100] ^= 0x01
            try wal.write(to: URL(fileURLWithPath: copy + "-wal"))
            _ = holder
            return await Result(catching: { try await SQLitePersistence(path: copy).load(userID: "u") })
        }
        let url = URL(fileURLWithPath: path)
        var bytes = try Data(contentsOf: url)
        let pageSize = Int(bytes[16]) << 8 | Int(bytes[17])
        let offset: Int
        var mask: UInt8 = 0x01
        switch place {
        case .sqliteHeader: offset = 17; mask = 0x10
        case .sqliteSchemaPage: offset = 100; mask = 0x08
        case .sqliteIndexPage:
            let root = try rootPage(of: "timeline_entry_by_moment", in: path)
            offset = root * pageSize - 20
        case .sqliteDataTextStaysValid: offset = try #require(Self.offset(of: "title 1", in: bytes)) + 1
        case .sqliteDataTextInvalid: offset = try #require(Self.offset(of: "title 1", in: bytes)) + 1; mask = 0x80
        case .sqliteDataNumber: offset = try #require(Self.offset(of: "1605000001", in: bytes)) + 9
        default: offset = 0
        }
        bytes[offset] ^= mask
        try bytes.write(to: url)
        return await Result(catching: { try await SQLitePersistence(path: path).load(userID: "u") })
    }

    private func rootPage(of index: String, in path: String) throws -> Int {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db else { return 0 }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        sqlite3_prepare_v2(db, "SELECT rootpage FROM sqlite_master WHERE name = '\(index)'", -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? Int(sqlite3_column_int64(statement, 0)) : 0
    }

    private static func offset(of text: String, in data: Data) -> Int? {
        data.firstRange(of: Data(text.utf8)).map { $0.lowerBound - data.startIndex }
    }
}

extension Result where Failure == any Error {
    init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
