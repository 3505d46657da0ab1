import Foundation
import Moments
import MomentsNetworking
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability

/// Damage met through the store: the damaged user's timeline is refetched and written
/// anew, the store says so through its log hook, and no other user is touched.
@Suite struct DamageThroughTheStoreTests {
    enum Kind: String, CaseIterable, Sendable { case sqlite, json }

    @Test(arguments: Kind.allCases)
    func aDamagedTimelineIsReplacedByTheNextRefreshAndOthersAreUntouched(kind: Kind) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let service = FakeMomentsService()
        await service.addUser("u", moments: ["m1", "m2", "m3"])
        await service.addUser("other", moments: ["o1"])
        func open() throws -> any MomentsPersistence {
            kind == .sqlite
                ? try SQLitePersistence(path: directory.url.appendingPathComponent("s.sqlite").path)
                : try JSONFilePersistence(directory: directory.url.appendingPathComponent("store"))
        }
        do {
            let store = MomentsStore(service: service, persistence: try open())
            try await store.refresh(userID: "u")
            try await store.refresh(userID: "other")
            await store.waitUntilIdle()
        }
        let other = try #require(try await open().load(userID: "other"))

        // One byte of "Moment m2" (a title) flipped, staying valid UTF-8.
        let file: URL = kind == .sqlite
            ? directory.url.appendingPathComponent("s.sqlite")
            : try #require(try FileManager.default.contentsOfDirectory(at: directory.url.appendingPathComponent("store"), includingPropertiesForKeys: nil)
                .first { $0.lastPathComponent.hasPrefix("u-") || $0.lastPathComponent.hasPrefix("u.") })
        var bytes = try Data(contentsOf: file)
        let offset = try #require(bytes.firstRange(of: Data("Moment m2".utf8))).lowerBound + 1
        bytes[offset] ^= 0x01
        try bytes.write(to: file)
        let damaged = await #expect(throws: PersistenceError.self) { try await open().load(userID: "u") }
        #expect(damaged?.code == .corruptedData)

        let records = PThreadMutex<[LogRecord]>([])
        let store = MomentsStore(service: service, persistence: try open(), configuration: .init {
            $0.logHandler = { record in records.withLock { $0.append(record) } }
        })
        let refreshed = try await store.refresh(userID: "u")
        await store.waitUntilIdle()

        #expect(refreshed == (try await service.serverTimeline("u")))
        #expect(try await open().load(userID: "u") == refreshed, "the damaged timeline was written anew")
        #expect(try await open().load(userID: "other") == other, "other users are untouched")
        #expect(records.withLock { $0 }.contains { $0.level == .warning && $0.metadata["userID"] == "u" }, "the store says what it did")
    }
}
