import Foundation
import MomentsSupport
import MomentsTestSupport
import Testing

/// The `moments` executable is a static launcher that blocks SIGINT and SIGTERM with its
/// first instruction and then becomes the command-line program built beside it
/// (`MomentsCLI-tool`), in the same process.
@Suite struct LauncherTests {
    /// The launcher names the signals it blocked in a variable the program's start-up
    /// code removes: a program the command starts (the demo's BFF) does not inherit it.
    @Test func theLaunchersVariableDoesNotReachTheProgramsEnvironment() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let probe = try await StartupProbe.build(in: directory.url)

        let (status, _, errors) = try await MomentsExecutable.run(["--version"], in: directory.url, environment: probe.environment(), startingAsAShellDoes: true)

        #expect(status == 0, "exit status \(status), stderr: \(errors)")
        #expect(errors.contains(StartupProbe.startedLine), "the preloaded initialiser ran: \(errors)")
        #expect(!errors.contains(StartupProbe.inheritedLine), "the program's environment still names the launcher's signals")
    }

    /// Copied away from the program it starts, the launcher says what is missing and
    /// exits 127, as a shell does for a missing command.
    @Test func withoutItsProgramTheLauncherSaysWhatIsMissingAndExits127() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let lonely = directory.url.appendingPathComponent("moments")
        // Copied by `cp`, in a process of its own: a copy this process wrote could still be
        // open for writing in a child another test is starting at that instant (inherited
        // across its fork), and starting the copy would fail with "Text file busy".
        let copy = Process()
        copy.executableURL = URL(fileURLWithPath: "/bin/cp")
        copy.arguments = [MomentsExecutable.url.path, lonely.path]
        let copied = try await copy.runCapturingOutput()
        try #require(copied.status == 0, "cp: \(copied.err)")

        let (status, _, errors) = try await MomentsExecutable.run(["--version"], in: directory.url, executable: lonely, startingAsAShellDoes: true)

        #expect(status == 127, "exit status \(status), stderr: \(errors)")
        #expect(errors.contains("cannot start MomentsCLI-tool beside \(directory.url.resolvingSymlinksInPath().path)/"), "stderr: \(errors)")
    }
}
