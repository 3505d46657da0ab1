import Foundation
import MomentsTestSupport

/// The built `moments` executable, run as a user would.
enum MomentsExecutable {
    /// Beside the test bundle, in the build directory.
    static var url: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("moments")
    }

    /// The command-line program the `moments` launcher starts, built beside it.
    static var programURL: URL {
        url.deletingLastPathComponent().appendingPathComponent("MomentsCLI-tool")
    }

    /// Runs `executable` (`moments` unless given) with `arguments` in `directory` to its
    /// end, with `extra` added to the environment; returns its status and output. With
    /// `startingAsAShellDoes`, it starts with no signal blocked.
    static func run(_ arguments: [String], in directory: URL, environment extra: [String: String] = [:],
                    executable: URL = url, startingAsAShellDoes: Bool = false) async throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.discardingCoverageProfile()
        process.environment = (process.environment ?? ProcessInfo.processInfo.environment).merging(extra) { $1 }
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        return try await process.runCapturingOutput(startingAsAShellDoes: startingAsAShellDoes)
    }

    /// Starts `moments` with `arguments` in `directory`; its standard output arrives as
    /// lines, its standard error is discarded.
    static func start(_ arguments: [String], in directory: URL) throws -> (process: Process, lines: AsyncStream<String>) {
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = url
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        return (process, LineReader(out.fileHandleForReading).lines)
    }
}
