import Foundation
import Moments
import MomentsCSQLite
@testable import MomentsSQLite
import MomentsTestSupport
import Testing

/// A database written by version 1 of the schema (one row per moment of each user) is
/// converted to version 2 (one row per moment, shared) when opened.
@Suite struct SQLiteMigrationTests {
    /// Writes `timelines` in the version 1 layout, as the SDK of that version did.
    private func writeVersion1(_ timelines: [String: MomentsDetails], to path: String) throws {
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        try connection.execute("PRAGMA journal_mode = WAL")
        try connection.execute("PRAGMA application_id = \(SQLiteSchema.applicationID)")
        for case .sql(let sql) in SQLiteSchema.migrations[0] { try connection.execute(sql) }
        try connection.execute("PRAGMA user_version = 1")
        for (userID, details) in timelines {
            let owner = try connection.statement("INSERT INTO timeline VALUES (?, ?, ?, ?, ?)")
            owner.bind(userID, at: 1)
            owner.bind(details.userDetails.id, at: 2)
            owner.bind(details.userDetails.name, at: 3)
            owner.bind(details.userDetails.avatar, at: 4)
            owner.bind(details.userDetails.backgroundImage, at: 5)
            try owner.run()
            let insert = try connection.statement("INSERT INTO moment VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for (position, moment) in details.moments.enumerated() {
                insert.bind(userID, at: 1)
                insert.bind(Int64(position), at: 2)
                insert.bind(moment.id, at: 3)
                insert.bind(moment.userDetails.id, at: 4)
                insert.bind(moment.userDetails.name, at: 5)
                insert.bind(moment.userDetails.avatar, at: 6)
                insert.bind(moment.type.rawValue, at: 7)
                insert.bind(moment.title, at: 8)
                insert.bind(moment.url, at: 9)
                insert.bind(StringListCoding.encode(moment.photos), at: 10)
                insert.bind(moment.createdDate, at: 11)
                insert.bind(moment.isLiked, at: 12)
                insert.bind(moment.likes.map { StringListCoding.encode($0.flatMap { [$0.id, $0.avatar] }) }, at: 13)
                try insert.run()
            }
        }
    }

    @Test func aVersion1DatabaseIsMigratedAndKeepsEveryTimeline() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("v1.sqlite").path
        let a = SampleTimelines.timeline(user: "a", moments: 12)
        let b = SampleTimelines.timeline(user: "b", moments: 3)
        try writeVersion1(["a": a, "b": b], to: path)

        let persistence = try SQLitePersistence(path: path)

        #expect(try await persistence.load(userID: "a") == a)
        #expect(try await persistence.load(userID: "b") == b)
        #expect(Set(try await persistence.userIDs()) == ["a", "b"])
        let connection = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        #expect(try connection.integer("PRAGMA user_version") == SQLiteSchema.currentVersion)
        #expect(try connection.text("PRAGMA integrity_check") == "ok")
        #expect(try connection.integer("SELECT count(*) FROM moment") == 15)
    }

    @Test func aMigratedDatabaseKeepsAnAuthorWhoseIDIsUnknown() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("v1.sqlite").path
        let a = SampleTimelines.timeline(user: "a", moments: 2)
        try writeVersion1(["a": a], to: path)
        var anonymous = SampleTimelines.timeline(user: "b", moments: 2)
        anonymous.moments[1].userDetails.id = nil

        let persistence = try SQLitePersistence(path: path)
        try await persistence.save(anonymous, for: "b")
        #expect(try await persistence.load(userID: "b") == anonymous)
        #expect(try await persistence.load(userID: "a") == a, "a checksum written before the migration still holds")
        let reopened = try SQLitePersistence(path: path)
        #expect(try await reopened.load(userID: "b")?.moments[1].userDetails.id == nil)
    }

    @Test func aMomentStoredTwiceInVersion1BecomesOneSharedRecordAndDuplicatesAreDropped() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("v1.sqlite").path
        let shared = SampleTimelines.moment(id: "shared", index: 1)
        var a = SampleTimelines.timeline(user: "a", moments: 2)
        a.moments.append(shared)
        a.moments.append(a.moments[0])  // the version 1 bug: one id listed twice
        var b = SampleTimelines.timeline(user: "b", moments: 1)
        b.moments.append(shared)
        try writeVersion1(["a": a, "b": b], to: path)

        let persistence = try SQLitePersistence(path: path)

        let loadedA = try #require(try await persistence.load(userID: "a"))
        #expect(loadedA.moments.map(\.id) == ["a/m0", "a/m1", "shared"])
        #expect(Set(try await persistence.userIDs(holding: "shared")) == ["a", "b"])
        var liked = shared
        liked.likes = [Moment.LikedUser(id: "b", avatar: "x")]
        try await persistence.save(PersistenceBatch(moments: [liked]))
        #expect(try await persistence.load(userID: "a")?.likers("shared") == ["b"])
        // A moment's save leaves each owner's isLiked as their timeline holds it.
        #expect(try await persistence.load(userID: "b")?.isLiked("shared") == shared.isLiked)
    }

    @Test func openingACurrentDatabaseTakesNoWriteLock() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("current.sqlite").path
        try await SQLitePersistence(path: path).save(SampleTimelines.timeline(user: "a", moments: 2), for: "a")
        let locker = try SQLiteConnection(path: path, busyTimeout: .seconds(1))
        try locker.execute("BEGIN EXCLUSIVE")
        defer { try? locker.execute("COMMIT") }

        let reader = try SQLitePersistence(path: path, configuration: .init(busyTimeout: .milliseconds(100)))

        #expect(try await reader.load(userID: "a") == SampleTimelines.timeline(user: "a", moments: 2))
    }
}
