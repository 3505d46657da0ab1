public import Foundation
import MomentsSupport
import MomentsHTTP

/// A ``MomentsPersistence`` that keeps one JSON file per user in a directory.
///
/// Each file holds the user's whole timeline, its moments included, and a checksum of
/// its content, verified on load. Writes are atomic (temporary file, `fsync`, `rename`,
/// directory `fsync`), so a crash leaves a user's old file or the new one. A saved
/// moment is written into the file of every user whose timeline holds it, one file
/// after another: a crash part-way leaves some of those files with the moment's
/// previous state, each file whole. That makes a moment held by many users costly to
/// save; for more than a few hundred users, use `SQLitePersistence`.
///
/// Any user id, with slashes, `..`, NULs, unicode or thousands of characters, maps to a
/// safe and unique file name inside the directory. A corrupt, truncated or foreign file
/// is a ``PersistenceError`` naming the file; other users' files stay readable. Files
/// written by version 1 of the format (without a checksum) are read, and rewritten in
/// the current format by the next save.
///
/// Every file operation runs on a thread of the persistence's own, never on Swift's
/// cooperative threads.
///
/// One process at a time: an instance holds the directory's lock file (`.moments.lock`,
/// an exclusive `flock`) from opening until ``close()``, so a second process cannot
/// write timelines from a memory that missed the first one's changes. Opening waits up
/// to `lockTimeout` for another process to close the store (a short-lived command
/// waits its turn), then fails with ``PersistenceError/Code-swift.struct/locked``. The
/// kernel releases the lock of a process that ends, however it ends. Instances in one
/// process share the lock. For several processes on one store, use `SQLitePersistence`
/// or `PostgresPersistence`.
///
/// For example:
/// ```swift
/// let persistence = try JSONFilePersistence(directory: URL(fileURLWithPath: "/var/lib/moments"))
/// try await persistence.save(details, for: "0")
/// ```
public actor JSONFilePersistence: MomentsPersistence {
    /// The version of the file format this SDK writes.
    public static let formatVersion = 2

    /// The directory holding the files.
    public nonisolated let directory: URL
    private let decoder = JSONDecoder()
    private let executor: ThreadExecutor
    /// Which users' files hold each moment, built by reading every file the first time a
    /// save or a query needs it, then kept up to date.
    private var holders: HolderIndex?
    /// The directory's lock, held until ``close()``.
    private let lock: StoreDirectoryLock
    private var isClosed = false

    /// The persistence's own thread: file reads, writes and `fsync`s never run on Swift's cooperative threads.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Opens (creating if needed) a directory of timelines.
    ///
    /// - Throws: ``PersistenceError/Code-swift.struct/ioFailure`` if the directory cannot
    ///   be created.
    /// Throws ``PersistenceError/Code-swift.struct/ioFailure`` if the directory cannot be
    /// written.
    public func checkWritable() throws {
        try checkOpen()
        guard access(directory.path, W_OK) == 0 else {
            throw PersistenceError(code: .ioFailure, location: directory.path,
                                   reason: "the store's directory cannot be written: \(String(cString: strerror(errno)))")
        }
    }

    /// Opens (creating if needed) the directory on a thread of its own, never on one of
    /// Swift's cooperative threads: it makes the directory and removes stale temporary
    /// files. Use it from async code; it is ``init(directory:lockTimeout:)`` otherwise.
    ///
    /// - Throws: `PersistenceError` as ``init(directory:lockTimeout:)`` does.
    public static func open(directory: URL, lockTimeout: Duration = .seconds(5)) async throws -> JSONFilePersistence {
        try await runOffThePool(named: "MomentsJSONFilePersistence.open") {
            try JSONFilePersistence(directory: directory, lockTimeout: lockTimeout)
        }
    }

    /// Opens (creating it 0700 if needed) the store in `directory`, waiting up to
    /// `lockTimeout` for another process that has it open to close it.
    ///
    /// - Throws: `PersistenceError` with `.ioFailure` if the directory cannot be made,
    ///   `.locked` if another process kept the store open all that time.
    public init(directory: URL, lockTimeout: Duration = .seconds(5)) throws {
        self.directory = directory.standardizedFileURL
        do {
            try AtomicFile.createPrivateDirectory(self.directory)
        } catch {
            throw PersistenceError(
                code: .ioFailure,
                location: self.directory.path,
                reason: "the directory cannot be created: \(error.localizedDescription)",
                underlyingError: error
            )
        }
        lock = try StoreDirectoryLock.acquire(directory: self.directory, waitingUpTo: lockTimeout)
        AtomicFile.removeStaleTemporaries(in: self.directory, olderThan: 600)
        executor = ThreadExecutor(name: "MomentsJSONFilePersistence")
    }

    deinit {
        lock.release()
        executor.shutDown()
    }

    /// Releases the directory's lock, so another process may open the store; every
    /// later call fails with ``PersistenceError/Code-swift.struct/closed``. Calling it
    /// again does nothing.
    public func close() async {
        isClosed = true
        lock.release()
    }

    private func checkOpen() throws {
        if isClosed {
            throw PersistenceError(code: .closed, location: directory.path, reason: "the store was closed")
        }
    }

    /// The file that holds `userID`'s timeline.
    public nonisolated func fileURL(for userID: String) -> URL {
        directory.appendingPathComponent(TimelineFileName.name(for: userID), isDirectory: false)
    }

    // MARK: - MomentsPersistence

    /// The timeline saved for `userID`, or `nil` (see ``MomentsPersistence``).
    public func load(userID: String) throws -> MomentsDetails? {
        try checkOpen()
        return try read(userID)
    }

    /// Saves `batch` all or nothing (see ``MomentsPersistence``).
    public func save(_ batch: PersistenceBatch) throws {
        try checkOpen()
        guard !batch.isEmpty else { return }
        // Assemble every file to write before writing any, so invalid input writes nothing.
        var reads = TimelineFileReads()
        var files: [String: MomentsDetails] = [:]
        for (userID, timeline) in batch.timelines {
            if let duplicate = timeline.duplicateMomentID {
                throw PersistenceError.duplicateMoment(duplicate, location: fileURL(for: userID).path, userID: userID)
            }
            let details = try timeline.assemble(for: userID) { id in
                if let moment = batch.moments[id] { return moment }
                guard let moment = try storedMoment(id, preferring: userID, reads: &reads) else {
                    throw PersistenceError.missingMoment(id, location: fileURL(for: userID).path, userID: userID)
                }
                return moment
            }
            if let details { files[userID] = details }
        }
        var others = Set<String>()
        for id in batch.moments.keys { others.formUnion(try holderIndex().users(holding: id)) }
        for userID in others where files[userID] == nil {
            guard var details = try reads.file(of: userID, using: read) else { continue }
            for (index, moment) in details.moments.enumerated() {
                if let saved = batch.moments[moment.id] {
                    details.moments[index] = saved.withIsLiked(moment.isLiked)
                }
            }
            files[userID] = details
        }
        for (userID, details) in files.sorted(by: { $0.key < $1.key }) {
            try write(details, for: userID)
        }
    }

    /// The users whose saved timelines hold `momentID`.
    public func userIDs(holding momentID: String) throws -> [String] {
        try checkOpen()
        return Array(try holderIndex().users(holding: momentID))
    }

    /// Removes `userID`'s timeline and the moments no other timeline holds.
    public func remove(userID: String) throws {
        try checkOpen()
        let url = fileURL(for: userID)
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw PersistenceError(code: .ioFailure, location: url.path, userID: userID,
                                   reason: "the file cannot be removed: \(String(cString: strerror(errno)))")
        }
        AtomicFile.syncDirectory(directory.path)
        index(nil, for: userID)
    }

    /// Every user with a saved timeline.
    public func userIDs() throws -> [String] {
        try checkOpen()
        return try fileNames().compactMap { name in
            if let userID = TimelineFileName.userID(fromSpelledName: name) { return userID }
            guard TimelineFileName.isHashedName(name) else { return nil }
            let url = directory.appendingPathComponent(name)
            // A hashed name cannot be reversed: the file records its user.
            guard let data = try? Data(contentsOf: url), let file = try? decodeFile(data, at: url, userID: nil) else { return nil }
            return file.userID
        }
    }

    /// Removes every timeline and moment.
    public func removeAll() throws {
        try checkOpen()
        for name in try fileNames() where TimelineFileName.userID(fromSpelledName: name) != nil || TimelineFileName.isHashedName(name) {
            unlink(directory.appendingPathComponent(name).path)
        }
        AtomicFile.syncDirectory(directory.path)
        holders = HolderIndex()
    }

    // MARK: - Files

    private func read(_ userID: String) throws -> MomentsDetails? {
        let url = fileURL(for: userID)
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
            return nil
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw PersistenceError(code: .ioFailure, location: url.path, userID: userID,
                                   reason: "the file cannot be read: \(error.localizedDescription)", underlyingError: error)
        }
        let file = try decodeFile(data, at: url, userID: userID)
        guard file.userID == userID else {
            throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                   reason: "the file holds the timeline of another user")
        }
        // `isLiked` is the owner's, as saved with the timeline.
        return file.details
    }

    private func write(_ details: MomentsDetails, for userID: String) throws {
        let url = fileURL(for: userID)
        do {
            try AtomicFile.write(to: url) { file in try writeFile(details, for: userID, to: file) }
        } catch let error as AtomicFile.Failure {
            throw PersistenceError(code: .ioFailure, location: url.path, userID: userID, reason: error.reason, underlyingError: error)
        } catch {
            throw PersistenceError(code: .invalidInput, location: url.path, userID: userID,
                                   reason: "the timeline cannot be encoded: \(error)", underlyingError: error)
        }
        index(details, for: userID)
    }

    /// Writes the file's bytes to `file` (``TimelineFileWriter``): a piece at a time, so
    /// that a timeline of hundreds of thousands of moments costs no second copy of it.
    private func writeFile(_ details: MomentsDetails, for userID: String, to file: AtomicFile.ChunkWriter) throws {
        let checksum = ContentChecksum.of(details, userID: userID)
        try TimelineFileWriter.write(details, userID: userID, version: Self.formatVersion, checksum: checksum) { try file.write($0) }
    }

    /// A moment as some stored file holds it (`userID`'s own first), or `nil`.
    private func storedMoment(_ id: String, preferring userID: String, reads: inout TimelineFileReads) throws -> Moment? {
        if let moment = try? reads.moment(id, inFileOf: userID, using: read) { return moment }
        for holder in try holderIndex().users(holding: id) where holder != userID {
            if let moment = try? reads.moment(id, inFileOf: holder, using: read) { return moment }
        }
        return nil
    }

    private func holderIndex() throws -> HolderIndex {
        if let holders { return holders }
        var built = HolderIndex()
        for userID in try userIDs() {
            // A damaged file holds nothing that can be found; its own load reports it.
            guard let details = try? read(userID) else { continue }
            built.set(details.moments.map(\.id), for: userID)
        }
        holders = built
        return built
    }

    private func index(_ details: MomentsDetails?, for userID: String) {
        guard var holders else { return }
        self.holders = nil  // no copy while updating
        holders.set(details?.moments.map(\.id) ?? [], for: userID)
        self.holders = holders
    }

    private func fileNames() throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PersistenceError(code: .ioFailure, location: directory.path,
                                   reason: "the directory cannot be listed: \(error.localizedDescription)", underlyingError: error)
        }
    }

    private func decodeFile(_ data: Data, at url: URL, userID: String?) throws -> TimelineFile {
        // The fast reader takes a well-formed file without building a tree of it; anything
        // else goes to JSONDecoder, whose errors say what is wrong.
        if let fast = TimelineFastDecoding.decodeFile(data), fast.format == TimelineFile.format,
           fast.version >= 2, fast.version <= Self.formatVersion, let checksum = fast.checksum,
           checksum == ContentChecksum.of(fast.details, userID: fast.userID) {
            return TimelineFile(version: Int(fast.version), userID: fast.userID, details: fast.details, checksum: checksum)
        }
        let header: TimelineFile.Header
        do {
            header = try decoder.decode(TimelineFile.Header.self, from: data)
        } catch {
            throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                   reason: "the file is not a Moments timeline (\(data.count) bytes): \(Self.describe(error))",
                                   underlyingError: error)
        }
        guard header.version <= Self.formatVersion else {
            throw PersistenceError(code: .unsupportedVersion, location: url.path, userID: userID,
                                   reason: "the file has format version \(header.version); this SDK reads up to \(Self.formatVersion)")
        }
        let file: TimelineFile
        do {
            file = try decoder.decode(TimelineFile.self, from: data)
        } catch {
            throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                   reason: "the timeline in the file is damaged: \(Self.describe(error))", underlyingError: error)
        }
        if header.version >= 2 {
            guard let checksum = file.checksum, checksum == ContentChecksum.of(file.details, userID: file.userID) else {
                throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                       reason: "the file's content does not match its checksum")
            }
        }
        return file
    }

    private static func describe(_ error: any Error) -> String {
        guard let decodingError = error as? DecodingError else { return String(describing: error) }
        switch decodingError {
        case .dataCorrupted(let context): return "not valid JSON (\(context.debugDescription))"
        case .keyNotFound(let key, _): return "missing '\(key.stringValue)'"
        case .typeMismatch(_, let context), .valueNotFound(_, let context):
            return "unexpected value at '\(DecodingFailure.render(context.codingPath))'"
        @unknown default: return String(describing: error)
        }
    }
}
