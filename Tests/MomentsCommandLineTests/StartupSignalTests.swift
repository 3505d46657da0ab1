import Foundation
import MomentsSupport
import MomentsTestSupport
import Testing

/// An interrupt that comes while `moments` starts, before `main` has installed its
/// handlers (while the dynamic loader maps the libraries, or while their initialisers
/// run: the Swift runtime, Foundation, libcurl's TLS stacks), neither kills the process
/// nor is lost: the launcher blocks SIGINT and SIGTERM with its first instruction, the
/// program keeps them blocked from its `.preinit_array`, and `main` handles what came
/// meanwhile.
///
/// The signal is sent by the process to itself, from a loader audit library
/// (`LD_AUDIT`) or the initialiser of a library preloaded into it (`LD_PRELOAD`), so it
/// lands in that window every time. Either also writes a file, which shows it ran. The
/// process starts as a shell starts it, with no signal blocked.
@Suite struct StartupSignalTests {
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptWhileTheLibrariesInitialiseStopsWatchGracefully(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let probe = try await StartupProbe.build(in: directory.url)

        let (status, _, errors) = try await MomentsExecutable.run(
            ["watch", "--user", "0", "--interval", "0.1", "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())",
             "--store", "sqlite:watch.sqlite"],
            in: directory.url, environment: probe.environment(signal: signal, marker: marker), startingAsAShellDoes: true
        )

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        #expect(status == 0, "watch stops gracefully and exits 0; exit status \(status), stderr: \(errors)")
    }

    /// Earlier still: a signal sent while the dynamic loader maps and relocates the
    /// program's libraries (from a loader audit library's first call, before any library
    /// is loaded). The launcher blocked it before the loader began: `watch` stops
    /// gracefully.
    @Test(arguments: [SIGINT, SIGTERM])
    func anInterruptWhileTheLoaderMapsTheLibrariesStopsWatchGracefully(signal: Int32) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let audit = try await StartupProbe.buildLoaderAudit(in: directory.url, signal: signal, marker: marker)

        let (status, _, errors) = try await MomentsExecutable.run(
            ["watch", "--user", "0", "--interval", "0.1", "--base-url", "http://127.0.0.1:\(refusedLoopbackPort())",
             "--store", "sqlite:watch.sqlite"],
            in: directory.url, environment: audit, startingAsAShellDoes: true
        )

        #expect(FileManager.default.fileExists(atPath: marker.path), "the loader's audit library ran and sent the signal")
        #expect(status == 0, "watch stops gracefully and exits 0; exit status \(status), stderr: \(errors)")
    }

    /// Why the launcher exists: started directly, the program is ended by that signal,
    /// before any of its code runs (status: the signal's number).
    @Test func withoutTheLauncherAnInterruptWhileTheLoaderRunsEndsTheProgram() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let audit = try await StartupProbe.buildLoaderAudit(in: directory.url, signal: SIGINT, marker: marker)

        let (status, _, errors) = try await MomentsExecutable.run(["--version"], in: directory.url, environment: audit, executable: MomentsExecutable.programURL, startingAsAShellDoes: true)

        #expect(FileManager.default.fileExists(atPath: marker.path), "the loader's audit library ran and sent the signal")
        #expect(status == SIGINT, "exit status \(status), stderr: \(errors)")
    }

    @Test func anInterruptWhileTheLibrariesInitialiseEndsAnyOtherCommandWithItsStatus() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let marker = directory.url.appendingPathComponent("signal-sent")
        let probe = try await StartupProbe.build(in: directory.url)

        let (status, _, errors) = try await MomentsExecutable.run(["--version"], in: directory.url, environment: probe.environment(signal: SIGINT, marker: marker), startingAsAShellDoes: true)

        #expect(FileManager.default.fileExists(atPath: marker.path), "the preloaded initialiser ran and sent the signal")
        // Killed by the signal, the status would be the signal's number (2) instead.
        #expect(status == 130, "exit status \(status), stderr: \(errors)")
    }
}
