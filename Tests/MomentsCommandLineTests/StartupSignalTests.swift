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
        let probe = try await StartupProbe.build(in: directory.url)

        let (status, _, errors) = try await Self.moments(
            ["watch", "--user", "0", "--interval", "0.1", "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())",
             "--store", "sqlite:watch.sqlite"],
            environment: probe.environment(signal: signal, marker: marker), in: directory.url
        )

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        #expect(status == 0, "watch stops gracefully and exits 0; exit status \(status), stderr: \(errors)")
    }

    @Test func anInterruptWhileTheLibrariesInitialiseEndsAnyOtherCommandWithItsStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let probe = try await StartupProbe.build(in: directory.url)

        let (status, _, errors) = try await Self.moments(["--version"], environment: probe.environment(signal: SIGINT, marker: marker), in: directory.url)

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        // Killed by the signal, the status would be the signal's number (2) instead.
        #expect(status == 130, "exit status \(status), stderr: \(errors)")
    }

    private static func moments(_ arguments: [String], environment extra: [String: String], in directory: URL) async throws -> (Int32, String, String) {
        let process = Process()
        process.discardingCoverageProfile()
        process.environment = (process.environment ?? ProcessInfo.processInfo.environment).merging(extra) { $1 }
        process.executableURL = MomentsExecutable.url
        process.arguments = arguments
        process.currentDirectoryURL = directory
        return try await process.runCapturingOutput(startingAsAShellDoes: true)
    }
}
