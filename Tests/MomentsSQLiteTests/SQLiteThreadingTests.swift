import Foundation
import Moments
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsCaching

/// SQLite's blocking calls run on threads of their own: a store waiting on another
/// process's write lock never holds up the rest of the process.
@Suite struct SQLiteThreadingTests {
    @Test func writesWaitingOnAnotherProcesssLockDoNotStallOtherWork() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("locked.sqlite").path
        // More writers than Swift has cooperative threads, each on its own connection.
        let writers = try (0..<8).map { _ in try SQLitePersistence(path: path, configuration: .init(busyTimeout: .seconds(120))) }

        // Another process takes the write lock and keeps it until released, or 60 seconds
        // pass: were SQLite's waits on Swift's threads, the work below would only go on
        // once the lock is released, after the writers.
        let holder = try await LockHolder(path: path)
        defer { holder.release() }

        let saved = Counter()
        let saves = writers.enumerated().map { index, writer in
            Task {
                try await writer.save(SampleTimelines.timeline(user: "w\(index)", moments: 3), for: "w\(index)")
                saved.increment()
            }
        }

        try await Self.aThousandOperationsOnAnotherStore()
        #expect(saved.value == 0, "the writers finished first: the other work waited for the lock")

        holder.release()
        for save in saves { try await save.value }
        #expect(saved.value == writers.count)
        await holder.ended()
        let reopened = try SQLitePersistence(path: path)
        #expect(Set(try await reopened.userIDs()) == Set((0..<8).map { "w\($0)" }))
    }

    /// Opening stores (JSON, SQLite, the disk cache) runs off Swift's cooperative threads: opens
    /// waiting on another process's lock, more than there are such threads, leave the
    /// rest of the process going.
    @Test func opensWaitingOnAnotherProcesssLockDoNotStallOtherWork() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("locked.sqlite").path
        // An exclusive lock in rollback-journal mode: even reading the schema version waits.
        let holder = try await LockHolder(path: path)
        defer { holder.release() }

        let opened = Counter()
        let opens = (0..<max(8, ProcessInfo.processInfo.activeProcessorCount * 2)).map { _ in
            Task {
                let result = await Result(awaiting: { try await SQLitePersistence.open(path: path, configuration: .init(busyTimeout: .seconds(120))) })
                opened.increment()
                return result
            }
        }
        try await Self.aThousandOperationsOnAnotherStore()
        #expect(opened.value == 0, "the opens finished first: the other work waited for the lock")

        holder.release()
        for open in opens {
            let persistence = try await open.value.get()
            await persistence.close()
        }
        await holder.ended()
        // The other two: a directory to make, stale files to remove, off the pool as well.
        _ = try await JSONFilePersistence.open(directory: directory.url.appendingPathComponent("json"))
        _ = try await DiskResponseCache.open(directory: directory.url.appendingPathComponent("cache"))
    }

    /// Opening a new file switches it to WAL, which takes the write lock while holding a
    /// read lock: with another process holding the write lock, SQLite refuses at once
    /// instead of waiting. The open waits the busy timeout all the same before it says
    /// the file is locked (several processes opening one new file at once otherwise
    /// failed with "database is locked").
    @Test func switchingANewFileToWALWaitsTheBusyTimeout() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("reserved.sqlite").path
        let holder = try await LockHolder(path: path, lock: "IMMEDIATE")
        defer { holder.release() }

        let timeout = Duration.milliseconds(300)
        let started = ContinuousClock.now
        let result = await Result(awaiting: { try await SQLitePersistence.open(path: path, configuration: .init(busyTimeout: timeout)) })
        let waited = ContinuousClock.now - started

        // A lower bound only: a busy machine makes the wait longer, never shorter.
        #expect(waited >= timeout, "gave up after \(waited), before the busy timeout")
        #expect(throws: PersistenceError.self) { try result.get() }
        holder.release()
        await holder.ended()
        let opened = try await SQLitePersistence.open(path: path, configuration: .init(busyTimeout: timeout))
        await opened.close()
    }

    /// Other work meanwhile: a thousand operations on an in-memory store.
    private static func aThousandOperationsOnAnotherStore() async throws {
        let service = FakeMomentsService()
        await service.addUser("0", moments: ["a", "b", "c"])
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        for round in 0..<500 {
            try await store.refresh(userID: "0")
            try await store.setLike(round % 2 == 0, momentID: "b", userID: "0")
        }
    }
}

private final class Counter: Sendable {
    private let count = PThreadMutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

/// Another process holding a lock on a SQLite file (in rollback-journal mode on a new
/// file) until ``release()``, or for 60 seconds if the test fails first: the `EXCLUSIVE`
/// lock, or with `IMMEDIATE` the write lock that still lets others read.
private struct LockHolder {
    private let process = Process()
    private let input = Pipe()

    init(path: String, lock: String = "EXCLUSIVE") async throws {
        process.discardingCoverageProfile()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", """
            import select, sqlite3, sys
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute('BEGIN ' + sys.argv[2])
            print('locked', flush=True)
            select.select([sys.stdin], [], [], 60)
            c.execute('COMMIT')
            """, path, lock]
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        var lines = LineReader(output.fileHandleForReading).lines.makeAsyncIterator()
        #expect(await lines.next() == "locked")
    }

    func release() {
        if process.isRunning { try? input.fileHandleForWriting.close() }
    }

    func ended() async {
        _ = await process.exitStatus()
    }
}
