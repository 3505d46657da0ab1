import Foundation
import Moments
import MomentsTestSupport
import Testing

/// A JSON-file store is one process's at a time: another process holding the store's
/// lock file is stood in for by an `flock` on a descriptor of the test's own (`flock`
/// locks belong to an open file, so the store's own descriptor conflicts with it as with
/// another process's).
@Suite struct JSONFileLockTests {
    private static func temporaryDirectory() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("moments-lock-\(UUID().uuidString)", isDirectory: true)
    }

    /// Locks the store's lock file as another process would; returns the descriptor, or
    /// `nil` if the lock is held elsewhere.
    private static func lockAsAnotherProcess(_ directory: URL) -> Int32? {
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let descriptor = open(directory.appendingPathComponent(".moments.lock").path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return nil
        }
        return descriptor
    }

    @Test func aStoreAnotherProcessHasOpenIsRefusedWithATypedErrorAndNothingWritten() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let other = try #require(Self.lockAsAnotherProcess(directory))
        let error = await #expect(throws: PersistenceError.self) {
            try await JSONFilePersistence.open(directory: directory, lockTimeout: .milliseconds(50))
        }
        #expect(error?.code == .locked)
        #expect(error?.description.contains(".moments.lock") == true)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(names == [".moments.lock"])

        // Once the other process has closed it, the store opens and works.
        close(other)
        let persistence = try await JSONFilePersistence.open(directory: directory, lockTimeout: .milliseconds(50))
        try await persistence.save(SampleTimelines.timeline(user: "0", moments: 3), for: "0")
        #expect(try await persistence.load(userID: "0") == SampleTimelines.timeline(user: "0", moments: 3))
    }

    @Test func anOpenStoreHoldsItsLockUntilClosedAndIsClosedAfter() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let persistence = try await JSONFilePersistence.open(directory: directory)
        try await persistence.save(SampleTimelines.timeline(user: "0", moments: 3), for: "0")
        #expect(Self.lockAsAnotherProcess(directory) == nil)

        await persistence.close()
        let other = try #require(Self.lockAsAnotherProcess(directory))
        close(other)
        let error = await #expect(throws: PersistenceError.self) { try await persistence.load(userID: "0") }
        #expect(error?.code == .closed)
        await #expect(throws: PersistenceError.self) { try await persistence.save(SampleTimelines.timeline(user: "1", moments: 3), for: "1") }
        await persistence.close()  // again: nothing happens
        // The closed instance wrote nothing more.
        let reopened = try await JSONFilePersistence.open(directory: directory)
        #expect(try await reopened.userIDs() == ["0"])
    }

    @Test func instancesInOneProcessShareTheLockUntilTheLastIsClosed() async throws {
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = try await JSONFilePersistence.open(directory: directory, lockTimeout: .milliseconds(50))
        let second = try await JSONFilePersistence.open(directory: directory, lockTimeout: .milliseconds(50))
        await first.close()
        #expect(Self.lockAsAnotherProcess(directory) == nil)
        await second.close()
        let other = try #require(Self.lockAsAnotherProcess(directory))
        close(other)
    }
}
