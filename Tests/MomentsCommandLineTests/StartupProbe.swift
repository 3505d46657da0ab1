import Foundation
import MomentsTestSupport

/// A shared library preloaded into `moments` (`LD_PRELOAD`) whose initialiser runs once
/// the executable's own start-up code has run (its `.preinit_array`) and before `main`:
/// it writes ``startedLine`` to standard error, the event a test waits for to know the
/// process's code runs; with ``environment(signal:marker:)``'s variables it also writes a
/// marker file and sends a signal to its own process; it also says so if the `moments`
/// launcher's variable reached the program's environment. Compiled with the C compiler
/// found on `PATH`.
struct StartupProbe {
    /// What the initialiser writes to standard error.
    static let startedLine = "moments-test-probe: started"

    /// The variable by which the `moments` launcher tells the program it starts which
    /// signals it blocked; the program's start-up code removes it.
    static let launcherVariable = "MOMENTS_INTERRUPTS_BLOCKED_AT_START"

    /// What the initialiser writes if the environment still has ``launcherVariable``.
    static let inheritedLine = "moments-test-probe: the launcher's variable is still set"

    struct NoCompiler: Error, CustomStringConvertible {
        var description: String { "no C compiler (clang, cc or gcc) on PATH to build the preloaded library" }
    }

    struct CompileFailed: Error, CustomStringConvertible {
        let output: String
        var description: String { "compiling the preloaded library failed: \(output)" }
    }

    let library: URL

    /// The environment that preloads it, and, if given, has it write `marker` and send
    /// `signal` to its own process.
    func environment(signal: Int32? = nil, marker: URL? = nil) -> [String: String] {
        var environment = ["LD_PRELOAD": library.path]
        if let signal { environment["MOMENTS_TEST_PROBE_SIGNAL"] = String(signal) }
        if let marker { environment["MOMENTS_TEST_PROBE_MARKER"] = marker.path }
        return environment
    }

    static func build(in directory: URL) async throws -> StartupProbe {
        let source = directory.appendingPathComponent("startup_probe.c")
        let library = directory.appendingPathComponent("libstartup_probe.so")
        try """
        #include <fcntl.h>
        #include <signal.h>
        #include <stdlib.h>
        #include <string.h>
        #include <unistd.h>

        __attribute__((constructor)) static void report_start(void) {
            const char *marker = getenv("MOMENTS_TEST_PROBE_MARKER");
            if (marker) {
                int fd = open(marker, O_CREAT | O_WRONLY, 0644);
                if (fd >= 0) close(fd);
            }
            const char *line = "\(startedLine)\\n";
            write(2, line, strlen(line));
            const char *inherited = getenv("\(launcherVariable)");
            if (inherited) {
                const char *said = "\(inheritedLine)\\n";
                write(2, said, strlen(said));
            }
            const char *signal = getenv("MOMENTS_TEST_PROBE_SIGNAL");
            if (signal) kill(getpid(), atoi(signal));
        }
        """.write(to: source, atomically: true, encoding: .utf8)
        try await compile(source, into: library)
        return StartupProbe(library: library)
    }

    /// A library for `LD_AUDIT` that writes `marker` and sends `signal` to its own
    /// process from `la_version`, which the dynamic loader calls before it loads any of
    /// the program's libraries: the signal lands while the loader maps and relocates them,
    /// before any code of the program has run. Returns the environment that loads it.
    /// (A statically linked program has no loader, and ignores it.)
    static func buildLoaderAudit(in directory: URL, signal: Int32, marker: URL) async throws -> [String: String] {
        let source = directory.appendingPathComponent("loader_audit.c")
        let library = directory.appendingPathComponent("libloader_audit.so")
        try """
        #define _GNU_SOURCE
        #include <fcntl.h>
        #include <link.h>
        #include <signal.h>
        #include <unistd.h>

        unsigned int la_version(unsigned int version) {
            (void)version;
            int fd = open("\(marker.path)", O_CREAT | O_WRONLY, 0644);
            if (fd >= 0) close(fd);
            kill(getpid(), \(signal));
            return LAV_CURRENT;
        }
        """.write(to: source, atomically: true, encoding: .utf8)
        try await compile(source, into: library)
        return ["LD_AUDIT": library.path]
    }

    private static func compile(_ source: URL, into library: URL) async throws {
        guard let compiler = findCompiler() else { throw NoCompiler() }
        let process = Process()
        process.executableURL = compiler
        process.arguments = ["-shared", "-fPIC", "-o", library.path, source.path]
        let (status, output, errors) = try await process.runCapturingOutput()
        guard status == 0 else { throw CompileFailed(output: output + errors) }
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
