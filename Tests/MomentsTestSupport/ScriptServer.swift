public import Foundation
import MomentsSupport

/// A loopback server run as a child process (a Python script of `Tools/`), for tests
/// that need a real socket. The script prints `PORT <n>` first and exits when its
/// stdin closes, so it cannot outlive the test process.
public final class ScriptServer {
    public let port: Int
    public let baseURL: URL
    private let process: Process
    private let stdin: Pipe

    /// Starts `script` (a path relative to the repository root) with `arguments`, and
    /// waits for its port on a thread of its own: a test waiting for Python to start
    /// must not hold one of Swift's few cooperative threads.
    public init(script: String, arguments: [String] = []) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [Repository.python, Repository.root.appendingPathComponent(script).path] + arguments
        let stdin = Pipe()
        let stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        self.process = process
        self.stdin = stdin

        let text = await withCheckedContinuation { continuation in
            Thread {
                var line = Data()
                while !line.contains(UInt8(ascii: "\n")) {
                    let chunk = stdout.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    line.append(chunk)
                }
                continuation.resume(returning: String(decoding: line, as: UTF8.self))
            }.start()
        }
        if text.hasPrefix("ERROR ") {
            process.terminate()
            throw ScriptServerError(message: "\(script) cannot start: " + text.dropFirst(6).trimmingCharacters(in: .whitespacesAndNewlines))
        }
        guard let portText = text.split(separator: "\n").first(where: { $0.hasPrefix("PORT ") })?.dropFirst(5),
              let port = Int(portText.trimmingCharacters(in: .whitespaces)) else {
            process.terminate()
            throw ScriptServerError(message: "\(script) did not report its port; it printed: \(text)")
        }
        self.port = port
        self.baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Stops the server: closes its stdin and sends SIGTERM. It does not wait on the
    /// calling thread (tests call it from Swift's few cooperative threads, and Foundation
    /// can miss a child's exit): the child is reaped on a thread of its own.
    public func stop() {
        guard signalStop() else { return }
        let process = self.process
        Thread { _ = process.waitForExit(timeout: .seconds(60)) }.start()
    }

    /// Stops the server and waits until it has exited (off Swift's threads), for a test
    /// that needs it gone: a connection to its port is then refused.
    public func stopAndWait() async {
        guard signalStop() else { return }
        _ = await process.exit()
    }

    /// Closes the server's stdin and sends SIGTERM; returns whether it was running.
    private func signalStop() -> Bool {
        guard process.isRunning else { return false }
        try? stdin.fileHandleForWriting.close()
        process.terminate()
        return true
    }

    deinit { stop() }
}

public struct ScriptServerError: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Paths inside this repository.
public enum Repository {
    /// The repository root, found from this file's location.
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The Python that runs the reference servers: `$MOMENTS_PYTHON`, else the virtual
    /// environment `.ci/run` makes in `.venv`, else `python3` on the `PATH`.
    public static let python: String = {
        if let python = ProcessInfo.processInfo.environment["MOMENTS_PYTHON"], !python.isEmpty { return python }
        let venv = root.appendingPathComponent(".venv/bin/python3").path
        return FileManager.default.isExecutableFile(atPath: venv) ? venv : "python3"
    }()
}

/// A fresh directory under the system's temporary directory, removed with `remove()`.
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("moments-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}

/// A port on 127.0.0.1 where nothing listens (bound, then released), for a server to
/// take. Another server may take it first: a test that needs a refused connection uses
/// ``refusedLoopbackPort()``.
public func unusedLoopbackPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    return boundLoopbackPort(fd)
}

/// A port on 127.0.0.1 that refuses every connection for as long as the test process
/// runs: a socket holds it bound and never listens, so no server (of this process or
/// another) can take it, as one did a port merely found unused while the suite ran
/// beside two builds.
public func refusedLoopbackPort() -> Int {
    RefusedPort.port
}

private enum RefusedPort {
    /// Made once; its socket stays open until the process ends.
    static let port: Int = boundLoopbackPort(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0))
}

/// Binds `fd` to an ephemeral port on 127.0.0.1; returns the port.
private func boundLoopbackPort(_ fd: Int32) -> Int {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on 127.0.0.1:`port`.
public func isListening(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = UInt16(port).bigEndian
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}
