import Foundation
import Moments
import MomentsTestSupport
import Testing

@Suite struct JSONFilePersistenceTests {
    let directory: TemporaryDirectory
    let persistence: JSONFilePersistence

    init() throws {
        directory = try TemporaryDirectory()
        persistence = try JSONFilePersistence(directory: directory.url.appendingPathComponent("store"))
    }

    private func damage(_ userID: String, with bytes: Data) throws {
        try bytes.write(to: persistence.fileURL(for: userID))
    }

    @Test(arguments: [
        ("garbage", Data([0x00, 0xFF, 0x13, 0x37])),
        ("foreign JSON", Data(#"{"hello": "world"}"#.utf8)),
        ("empty", Data()),
    ])
    func aDamagedFileIsATypedErrorNamingItAndOthersStayReadable(name: String, bytes: Data) async throws {
        defer { directory.remove() }
        let other = SampleTimelines.timeline(user: "other", moments: 3)
        try await persistence.save(other, for: "other")
        try await persistence.save(SampleTimelines.timeline(user: "victim", moments: 3), for: "victim")
        try damage("victim", with: bytes)

        let error = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "victim") }

        #expect(error?.code == .corruptedData)
        #expect(error?.location == persistence.fileURL(for: "victim").path)
        #expect(error?.userID == "victim")
        #expect(try await persistence.load(userID: "other") == other)
    }

    @Test func aTruncatedFileIsCorruptedData() async throws {
        defer { directory.remove() }
        try await persistence.save(SampleTimelines.timeline(user: "t", moments: 50), for: "t")
        let whole = try Data(contentsOf: persistence.fileURL(for: "t"))
        try damage("t", with: whole.prefix(whole.count / 2))

        let error = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "t") }

        #expect(error?.code == .corruptedData)
        #expect(error?.description.contains("not valid JSON") == true)
    }

    @Test func aFileFromANewerVersionIsRefused() async throws {
        defer { directory.remove() }
        try damage("n", with: Data(#"{"format": "moments.timeline", "version": 99, "userID": "n", "details": {}}"#.utf8))

        let error = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "n") }

        #expect(error?.code == .unsupportedVersion)
        #expect(error?.reason.contains("99") == true)
    }

    @Test func hostileIDsNeverLeaveTheDirectory() async throws {
        defer { directory.remove() }
        for id in SampleTimelines.hostileUserIDs {
            try await persistence.save(SampleTimelines.timeline(user: id, moments: 1), for: id)
            #expect(persistence.fileURL(for: id).deletingLastPathComponent().path == persistence.directory.path)
            #expect(persistence.fileURL(for: id).lastPathComponent.utf8.count <= 255)
        }
        let everything = FileManager.default.enumerator(atPath: directory.url.path)?.allObjects as? [String] ?? []
        #expect(everything.filter { !$0.hasPrefix("store") }.isEmpty)
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: persistence.directory.path)).subtracting([".moments.lock"]).count == SampleTimelines.hostileUserIDs.count)
    }

    @Test func aFailedWriteKeepsTheOldFileAndLeavesNoTemporary() async throws {
        defer { directory.remove() }
        let old = SampleTimelines.timeline(user: "w", moments: 2, version: 1)
        try await persistence.save(old, for: "w")
        // Replace the file by a non-empty directory: the final rename must fail.
        let url = persistence.fileURL(for: "w")
        try FileManager.default.removeItem(at: url)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        try Data("keep".utf8).write(to: url.appendingPathComponent("blocker"))

        let error = await #expect(throws: PersistenceError.self) {
            try await persistence.save(SampleTimelines.timeline(user: "w", moments: 2, version: 2), for: "w")
        }

        #expect(error?.code == .ioFailure)
        #expect(error?.reason.contains("rename") == true)
        let names = try FileManager.default.contentsOfDirectory(atPath: persistence.directory.path)
        #expect(!names.contains { $0.hasPrefix(".tmp-") })
    }

    @Test func surviveSIGKILLInTheMiddleOfAWriteLoop() async throws {
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("crash").path
        var version = 1
        var generator = SeededGenerator(seed: 5)
        for _ in 0..<5 {
            let saves = try await CrashHarness.round(kind: "json", path: path, users: 4, startVersion: version, using: &generator) {
                try JSONFilePersistence(directory: URL(fileURLWithPath: path))
            }
            version += 10_000
            #expect(saves > 0)
        }
    }
}

@Suite struct JSONFilePersistenceFullDiskTests {
    @Test func aWriteThatRunsOutOfSpaceIsTypedAndLosesNothing() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store").path

        let result = try await FullDisk.run(kind: "json", path: path, limit: 64 * 1024)

        #expect(result.status == 0)
        #expect(result.lines == ["small saved", "large failed I/O failure", "small intact"])
        let names = try FileManager.default.contentsOfDirectory(atPath: path)
        #expect(!names.contains { $0.hasPrefix(".tmp-") }, "the partial temporary file is removed")
    }
}

@Suite struct JSONFileFormatMigrationTests {
    @Test func aVersion1FileIsReadAndRewrittenInTheCurrentFormat() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try JSONFilePersistence(directory: directory.url)
        let details = SampleTimelines.timeline(user: "old", moments: 4)
        struct Version1: Encodable {
            var format = "moments.timeline"
            var version = 1
            var userID: String
            var details: MomentsDetails
        }
        try JSONEncoder().encode(Version1(userID: "old", details: details)).write(to: persistence.fileURL(for: "old"))

        #expect(try await persistence.load(userID: "old") == details)

        try await persistence.save(details, for: "old")
        let rewritten = try JSONSerialization.jsonObject(with: Data(contentsOf: persistence.fileURL(for: "old"))) as? [String: Any]
        #expect(rewritten?["version"] as? Int == JSONFilePersistence.formatVersion)
        #expect(rewritten?["checksum"] != nil)
        #expect(try await persistence.load(userID: "old") == details)
    }
}
