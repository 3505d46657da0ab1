import Foundation
import MomentsSupport

/// The reference BFF (`Tools/bff/server.py`) as a child process on a free loopback port.
///
/// It is started with `--exit-with-stdin`, so it also ends if this process dies without
/// stopping it.
final class ReferenceBFFProcess: Sendable {
    struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    let port: Int
    private let process: Process
    private let stdin: Pipe

    /// The child's process identifier.
    var processIdentifier: Int32 { process.processIdentifier }

    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)") ?? URL(fileURLWithPath: "/") }

    private init(port: Int, process: Process, stdin: Pipe) {
        self.port = port
        self.process = process
        self.stdin = stdin
    }

    /// Starts the BFF and returns once it listens. The wait for its port runs on a thread
    /// of its own; cancelling the calling task ends the child, and the start fails at once.
    static func start() async throws -> ReferenceBFFProcess {
        guard let script = locateScript() else {
            throw StartFailure(description: "cannot find Tools/bff/server.py; run from the repository or set MOMENTS_BFF_SCRIPT")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let python = python(besideScript: script)
        process.arguments = [python, script, "--port", "0", "--exit-with-stdin"]
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = FileHandle.nullDevice
        do {
            // Not with this thread's signal mask: started from one of Swift's threads,
            // the child would inherit SIGTERM blocked and `terminate()` would not end it.
            try await process.runWithNoSignalBlocked()
        } catch {
            throw StartFailure(description: "cannot start \(python): \(error.localizedDescription)")
        }
        let reader = stdout.fileHandleForReading
        // Ending the child closes its output: the read below then returns what it had.
        let text = try await withTaskCancellationHandler {
            try await runOffThePool(named: "moments.bff-start") {
                var text = ""
                while !text.contains("\n") {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                return text
            }
        } onCancel: {
            process.terminate()
        }
        if Task.isCancelled {
            process.terminate()
            throw CancellationError()
        }
        guard let line = text.split(separator: "\n").first, line.hasPrefix("PORT "), let port = Int(line.dropFirst(5)) else {
            process.terminate()
            let said = text.split(separator: "\n").first.map { $0.hasPrefix("ERROR ") ? String($0.dropFirst(6)) : "" } ?? ""
            throw StartFailure(description: said.isEmpty ? "the reference BFF (\(python) \(script)) did not start" : said)
        }
        return ReferenceBFFProcess(port: port, process: process, stdin: stdin)
    }

    func stop() {
        guard process.isRunning else { return }
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        // The BFF ends at once on SIGTERM; a Foundation that missed its exit cannot
        // hold the tool for more than this.
        _ = process.waitForExit(timeout: .seconds(5))
    }

    /// `$MOMENTS_PYTHON`, else the virtual environment `.ci/run` makes in the
    /// repository's `.venv`, else `python3` on the `PATH`.
    private static func python(besideScript script: String) -> String {
        if let python = ProcessInfo.processInfo.environment["MOMENTS_PYTHON"], !python.isEmpty { return python }
        let root = URL(fileURLWithPath: script).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let venv = root.appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }

    private static func locateScript() -> String? {
        let candidates: [String?] = [
            ProcessInfo.processInfo.environment["MOMENTS_BFF_SCRIPT"],
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("Tools/bff/server.py").path,
            FileManager.default.currentDirectoryPath + "/Tools/bff/server.py",
        ]
        return candidates.compactMap { $0 }.first { FileManager.default.fileExists(atPath: $0) }
    }
}
