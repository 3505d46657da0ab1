public import Foundation
import MomentsNetworking

/// A ``MomentsPersistence`` that keeps one JSON file per user in a directory.
///
/// Writes are atomic (temporary file, `fsync`, `rename`, directory `fsync`), so a crash
/// leaves a user's old timeline or the new one. Any user id, with slashes, `..`, NULs,
/// unicode or thousands of characters, maps to a safe and unique file name inside the
/// directory. A corrupt, truncated or foreign file is a ``PersistenceError`` naming the
/// file; other users' files stay readable.
///
/// For example:
/// ```swift
/// let persistence = try JSONFilePersistence(directory: URL(fileURLWithPath: "/var/lib/moments"))
/// try await persistence.save(details, for: "0")
/// ```
public actor JSONFilePersistence: MomentsPersistence {
    /// The version of the file format this SDK writes.
    public static let formatVersion = 1

    /// The directory holding the files.
    public nonisolated let directory: URL
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    /// Opens (creating if needed) a directory of timelines.
    ///
    /// - Throws: ``PersistenceError/Code-swift.struct/ioFailure`` if the directory cannot
    ///   be created.
    public init(directory: URL) throws {
        self.directory = directory.standardizedFileURL
        do {
            try FileManager.default.createDirectory(at: self.directory, withIntermediateDirectories: true)
        } catch {
            throw PersistenceError(
                code: .ioFailure,
                location: self.directory.path,
                reason: "the directory cannot be created: \(error.localizedDescription)",
                underlyingError: error
            )
        }
        AtomicFile.removeStaleTemporaries(in: self.directory, olderThan: 600)
    }

    /// The file that holds `userID`'s timeline.
    public nonisolated func fileURL(for userID: String) -> URL {
        directory.appendingPathComponent(TimelineFileName.name(for: userID), isDirectory: false)
    }

    public func load(userID: String) throws -> MomentsDetails? {
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
        return file.details
    }

    public func save(_ details: MomentsDetails, for userID: String) throws {
        let url = fileURL(for: userID)
        let data: Data
        do {
            data = try encoder.encode(TimelineFile(version: Self.formatVersion, userID: userID, details: details))
        } catch {
            throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                   reason: "the timeline cannot be encoded: \(error)", underlyingError: error)
        }
        do {
            try AtomicFile.write(data, to: url)
        } catch {
            throw PersistenceError(code: .ioFailure, location: url.path, userID: userID, reason: error.reason, underlyingError: error)
        }
    }

    /// Rewrites the user's file with the moment replaced: a file holds one whole timeline.
    @discardableResult
    public func saveMoment(_ moment: Moment, for userID: String) throws -> Bool {
        guard var details = try load(userID: userID),
              let index = details.moments.firstIndex(where: { $0.id == moment.id }) else { return false }
        details.moments[index] = moment
        try save(details, for: userID)
        return true
    }

    public func remove(userID: String) throws {
        let url = fileURL(for: userID)
        guard unlink(url.path) == 0 || errno == ENOENT else {
            throw PersistenceError(code: .ioFailure, location: url.path, userID: userID,
                                   reason: "the file cannot be removed: \(String(cString: strerror(errno)))")
        }
        AtomicFile.syncDirectory(directory.path)
    }

    public func userIDs() throws -> [String] {
        try fileNames().compactMap { name in
            if let userID = TimelineFileName.userID(fromSpelledName: name) { return userID }
            guard TimelineFileName.isHashedName(name) else { return nil }
            let url = directory.appendingPathComponent(name)
            // A hashed name cannot be reversed: the file records its user.
            guard let data = try? Data(contentsOf: url), let file = try? decodeFile(data, at: url, userID: nil) else { return nil }
            return file.userID
        }
    }

    public func removeAll() throws {
        for name in try fileNames() where TimelineFileName.userID(fromSpelledName: name) != nil || TimelineFileName.isHashedName(name) {
            unlink(directory.appendingPathComponent(name).path)
        }
        AtomicFile.syncDirectory(directory.path)
    }

    // MARK: - Files

    private func fileNames() throws -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw PersistenceError(code: .ioFailure, location: directory.path,
                                   reason: "the directory cannot be listed: \(error.localizedDescription)", underlyingError: error)
        }
    }

    private func decodeFile(_ data: Data, at url: URL, userID: String?) throws -> TimelineFile {
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
        do {
            return try decoder.decode(TimelineFile.self, from: data)
        } catch {
            throw PersistenceError(code: .corruptedData, location: url.path, userID: userID,
                                   reason: "the timeline in the file is damaged: \(Self.describe(error))", underlyingError: error)
        }
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

/// The content of one timeline file.
struct TimelineFile: Codable {
    struct Header: Decodable {
        let format: String
        let version: Int

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            format = try container.decode(String.self, forKey: .format)
            guard format == TimelineFile.format else {
                throw DecodingError.dataCorruptedError(forKey: .format, in: container, debugDescription: "format is '\(format)'")
            }
            version = try container.decode(Int.self, forKey: .version)
        }

        enum CodingKeys: String, CodingKey { case format, version }
    }

    static let format = "moments.timeline"
    var format = TimelineFile.format
    let version: Int
    let userID: String
    let details: MomentsDetails

    init(version: Int, userID: String, details: MomentsDetails) {
        self.version = version
        self.userID = userID
        self.details = details
    }
}
