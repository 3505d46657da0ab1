import Foundation
import MomentsSupport
import MomentsTestSupport

/// SHA-256 in hex: of a file by the system's `sha256sum` (waited for off Swift's
/// threads: hashing megabytes in a debug build would hold one of them for seconds), of
/// a few bytes in memory.
enum FileDigest {
    static func sha256(of file: URL) async throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [file.path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: await output.fileHandleForReading.readToEndOffPool(), as: UTF8.self)
        _ = await process.exitStatus()
        return String(text.prefix(64))
    }

    static func sha256(of bytes: [UInt8]) -> String {
        SHA256.hexDigest(bytes)
    }
}
