import Foundation
import MomentsSupport
import MomentsTestSupport
import Testing

/// An interrupt that comes while `moments` starts, once the dynamic loader has mapped
/// its libraries but before `main` has installed its handlers (while the libraries'
/// initialisers run: the Swift runtime, Foundation, libcurl's TLS stacks), neither
/// kills the process nor is lost: the executable blocks SIGINT and SIGTERM from its
/// `.preinit_array`, and `main` handles what came meanwhile.
///
/// The signal is sent by the process to itself, from the initialiser of a library
/// preloaded into it (`LD_PRELOAD`), so it lands in that window every time. That
/// initialiser also writes a file, which shows it ran. The process starts as a shell
/// starts it, with no signal blocked.
@Suite struct StartupSignalTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptWhileTheLibrariesInitialiseStopsWatchGracefully(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let library = try await SelfSignallingLibrary.build(signal: signal, marker: marker, in: directory.url)

        let (status, _, errors) = try await Self.moments(
            ["watch", "--user", "0", "--interval", "0.1", "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())",
             "--store", "sqlite:watch.sqlite"],
            preloading: library, in: directory.url
        )

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        #expect(status == 0, "watch stops gracefully and exits 0; exit status \(status), stderr: \(errors)")
    }

    @Test func anInterruptWhileTheLibrariesInitialiseEndsAnyOtherCommandWithItsStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let library = try await SelfSignallingLibrary.build(signal: SIGINT, marker: marker, in: directory.url)

        let (status, _, errors) = try await Self.moments(["--version"], preloading: library, in: directory.url)

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        // Killed by the signal, the status would be the signal's number (2) instead.
        #expect(status == 130, "exit status \(status), stderr: \(errors)")
    }

    private static func moments(_ arguments: [String], preloading library: URL, in directory: URL) async throws -> (Int32, String, String) {
        let process = Process()
        process.discardingCoverageProfile()
        var environment = process.environment ?? ProcessInfo.processInfo.environment
        environment["LD_PRELOAD"] = library.path
        process.environment = environment
        process.executableURL = MomentsExecutable.url
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try await process.runWithNoSignalBlocked()
        async let output = out.fileHandleForReading.readToEndOffPool()
        async let errors = err.fileHandleForReading.readToEndOffPool()
        let status = await process.exitStatus()
        return (status, String(decoding: await output, as: UTF8.self), String(decoding: await errors, as: UTF8.self))
    }
}

/// A shared library whose initialiser writes a marker file and then sends a signal to
/// its own process, compiled with the C compiler found on `PATH`.
enum SelfSignallingLibrary {
    struct NoCompiler: Error, CustomStringConvertible {
        var description: String { "no C compiler (clang, cc or gcc) on PATH to build the preloaded library" }
    }

    struct CompileFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "compiling the preloaded library failed: \(output)" }
    }

    static func build(signal: Int32, marker: URL, in directory: URL) async throws -> URL {
        let source = directory.appendingPathComponent("self_signal.c")
        let library = directory.appendingPathComponent("libself_signal.so")
        try """
        #include <fcntl.h>
        #include <signal.h>
        #include <unistd.h>

        __attribute__((constructor)) static void send_signal_while_starting(void) {
            int fd = open("\(marker.path)", O_CREAT | O_WRONLY, 0644);
            if (fd >= 0) close(fd);
            kill(getpid(), \(signal));
        }
        """.write(to: source, atomically: true, encoding: .utf8)
        guard let compiler = findCompiler() else { throw NoCompiler() }
        let process = Process()
        process.executableURL = compiler
        process.arguments = ["-shared", "-fPIC", "-o", library.path, source.path]
        let (status, output, errors) = try await process.runCapturingOutput()
        guard status == 0 else { throw CompileFailed(output: output + errors) }
        return library
    }

    private static func findCompiler() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for name in ["clang", "cc", "gcc"] {
            for folder in path.split(separator: ":") {
                let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent(name)
                if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            }
        }
        return nil
    }
}
