package import Foundation
#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif

/// Crash-safe whole-file writes: a temporary file in the same directory, `fsync`, `rename`
/// over the target, then `fsync` of the directory. A crash at any point leaves the old
/// file or the new one, never a torn one.
///
/// Files are created readable and writable by their owner only (0600), and directories
/// made here are the owner's only (0700): they hold users' timelines and authenticated
/// answers.
package enum AtomicFile {
    package static let temporaryPrefix = ".tmp-"

    package struct Failure: Error {
        package let operation: String
        package let errno: Int32
        package var reason: String { "\(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))" }
    }

    package static func write(_ data: Data, to url: URL) throws(Failure) {
        do {
            try write(to: url) { (file: ChunkWriter) throws(Failure) in try file.write(data) }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw Failure(operation: "write", errno: EIO)  // unreachable: the writer throws only Failure
        }
    }

    /// The file being written by ``write(to:_:)``: each chunk goes to disk as it comes,
    /// so a large file never has to be whole in memory.
    package struct ChunkWriter {
        fileprivate let fd: Int32

        /// Appends `data` to the file.
        package func write(_ data: Data) throws(Failure) {
            try writeAll(data, to: fd)
        }
    }

    /// Writes `url` as ``write(_:to:)`` does, from the chunks `produce` writes in turn.
    /// If `produce` throws (its error is rethrown as it is) or a write fails (a
    /// ``Failure``), the temporary file is removed and `url` is left as it was.
    package static func write(to url: URL, _ produce: (ChunkWriter) throws -> Void) throws {
        let directory = url.deletingLastPathComponent().path
        let temporary = directory + "/" + temporaryPrefix + UUID().uuidString
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Failure(operation: "open", errno: errno) }
        var closed = false
        defer {
            if !closed { close(fd) }
        }
        do {
            try produce(ChunkWriter(fd: fd))
            guard fsync(fd) == 0 else { throw Failure(operation: "fsync", errno: errno) }
            closed = true
            guard close(fd) == 0 else { throw Failure(operation: "close", errno: errno) }
            guard rename(temporary, url.path) == 0 else { throw Failure(operation: "rename", errno: errno) }
        } catch {
            unlink(temporary)
            throw error
        }
        syncDirectory(directory)
    }

    private static func writeAll(_ data: Data, to fd: Int32) throws(Failure) {
        let failure: Failure? = data.withUnsafeBytes { buffer in
            do throws(Failure) {
                try writeAll(buffer, to: fd)
                return nil
            } catch {
                return error
            }
        }
        if let failure { throw failure }
    }

    /// Writes all of `buffer` to `fd`, going on after short writes and interruptions.
    package static func writeAll(_ buffer: UnsafeRawBufferPointer, to fd: Int32) throws(Failure) {
        var offset = 0
        while offset < buffer.count {
            let written = systemWrite(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(operation: "write", errno: errno)
            }
            offset += written
        }
    }

    /// Creates `url` and any missing parent as directories of the owner only (0700);
    /// directories that exist are left as they are.
    package static func createPrivateDirectory(_ url: URL) throws {
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Creates an empty file of the owner only (0600) at `path` if there is none, so a
    /// library that then opens it (SQLite) does not create it with wider permissions.
    package static func createPrivateFileIfMissing(_ path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd >= 0 { close(fd) }
    }

    /// Reads the secret in `name` inside `directory`, creating it (32 random bytes, 0600)
    /// if missing or unreadable as such.
    package static func secret(named name: String, in directory: URL) -> [UInt8] {
        let url = directory.appendingPathComponent(name)
        if let data = try? Data(contentsOf: url), data.count == 32 { return Array(data) }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        do {
            try write(Data(bytes), to: url)
        } catch {
            return bytes // a secret of this process alone: answers are simply not shared
        }
        // Another process may have written its own first: use whatever the file holds.
        if let data = try? Data(contentsOf: url), data.count == 32 { return Array(data) }
        return bytes
    }

    /// Makes a rename durable. Best effort: some file systems refuse `fsync` on directories.
    package static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    /// Removes temporary files left by writers that died more than `age` ago.
    package static func removeStaleTemporaries(in directory: URL, olderThan age: TimeInterval) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory.path) else { return }
        let cutoff = Date().addingTimeInterval(-age)
        for name in names where name.hasPrefix(temporaryPrefix) {
            let path = directory.appendingPathComponent(name).path
            if let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                unlink(path)
            }
        }
    }
}
