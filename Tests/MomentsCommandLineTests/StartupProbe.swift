import Foundation
import MomentsTestSupport

/// A shared library preloaded into `moments` (`LD_PRELOAD`) whose initialiser runs once
/// the executable's own start-up code has run (its `.preinit_array`) and before `main`:
/// it writes ``startedLine`` to standard error, the event a test waits for to know the
/// process's code runs; with ``environment(signal:marker:)``'s variables it also writes a
/// marker file and sends a signal to its own process. Compiled with the C compiler found
/// on `PATH`.
struct StartupProbe {
    /// What the initialiser writes to standard error.
    static let startedLine = "moments-test-probe: started"

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
            const char *signal = getenv("MOMENTS_TEST_PROBE_SIGNAL");
            if (signal) kill(getpid(), atoi(signal));
        }
        """.write(to: source, atomically: true, encoding: .utf8)
        guard let compiler = findCompiler() else { throw NoCompiler() }
        let process = Process()
        process.executableURL = compiler
        process.arguments = ["-shared", "-fPIC", "-o", library.path, source.path]
        let (status, output, errors) = try await process.runCapturingOutput()
        guard status == 0 else { throw CompileFailed(output: output + errors) }
        return StartupProbe(library: library)
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
