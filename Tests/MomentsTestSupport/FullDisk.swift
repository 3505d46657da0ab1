import Foundation

/// Runs `MomentsCrashWriter` with a file-size limit, so that its writes fail part-way as
/// on a full disk, and returns the lines it reported.
public enum FullDisk {
    public static func run(kind: String, path: String, limit: Int) throws -> (status: Int32, lines: [String]) {
        let process = Process()
        process.executableURL = CrashHarness.writerURL
        process.arguments = [kind, path, "--file-size-limit", String(limit)]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text.split(separator: "\n").map(String.init))
    }
}
