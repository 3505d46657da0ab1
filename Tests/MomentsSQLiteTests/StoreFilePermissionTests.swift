import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing

/// Stores hold users' timelines: files the owner's only (0600), directories 0700.
@Suite struct StoreFilePermissionTests {
    @Test func aSQLiteStoreAndItsWALAreTheOwnersOnly() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("moments.sqlite").path
        let persistence = try SQLitePersistence(path: path)
        try await persistence.save(SampleTimelines.timeline(user: "0", moments: 2), for: "0")

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasPrefix("moments.sqlite") }
        #expect(files.contains("moments.sqlite") && files.contains("moments.sqlite-wal"), "\(files)")
        for file in files {
            #expect(try mode(directory.url.appendingPathComponent(file)) == 0o600, "\(file)")
        }
    }

    @Test func aJSONStoreIsTheOwnersOnly() async throws {
        let parent = try TemporaryDirectory()
        defer { parent.remove() }
        let directory = parent.url.appendingPathComponent("store")
        let persistence = try JSONFilePersistence(directory: directory)
        try await persistence.save(SampleTimelines.timeline(user: "0", moments: 2), for: "0")

        #expect(try mode(directory) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(!files.isEmpty)
        for file in files {
            #expect(try mode(directory.appendingPathComponent(file)) == 0o600, "\(file)")
        }
    }

    private func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return ((attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1) & 0o777
    }
}
