import Foundation

/// Runs `MomentsCrashWriter` with a file-size limit, so that its writes fail part-way as
/// on a full disk, and returns the lines it reported.
public enum FullDisk {
    public static func run(kind: String, path: String, limit: Int) throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = CrashHarness.writerURL
        process.arguments = [kind, path, "--file-size-limit", String(limit)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text.split(separator: "\n").map(String.init))
    }

    /// Opens a closed store where no file can grow, reads it and tries to save;
    /// returns the lines the child reported (`read N moments`, `save failed CODE`, …).
    public static func readWhenFull(kind: String, path: String) async throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = CrashHarness.writerURL
        process.arguments = ["read-when-full", kind, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: await output.fileHandleForReading.readToEndOffPool(), as: UTF8.self)
        let status = await process.exitStatus()
        return (status, text.split(separator: "\n").map(String.init))
    }
}
