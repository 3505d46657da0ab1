import Foundation

/// Runs `MomentsCrashWriter` with a file-size limit, so that its writes fail part-way as
/// on a full disk, and returns the lines it reported.
public enum FullDisk {
    /// Saves a small timeline, then one too large for `limit` bytes per file.
    public static func run(kind: String, path: String, limit: Int) async throws -> (status: Int32, lines: [String]) {
        try await writer([kind, path, "--file-size-limit", String(limit)])
    }

    /// Opens a closed store where no file can grow, reads it and tries to save;
    /// returns the lines the child reported (`read N moments`, `save failed CODE`, …).
    public static func readWhenFull(kind: String, path: String) async throws -> (status: Int32, lines: [String]) {
        try await writer(["read-when-full", kind, path])
    }

    private static func writer(_ arguments: [String]) async throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = CrashHarness.writerURL
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: await output.fileHandleForReading.readToEndOffPool(), as: UTF8.self)
        let status = await process.exitStatus()
        return (status, text.split(separator: "\n").map(String.init))
    }
}
