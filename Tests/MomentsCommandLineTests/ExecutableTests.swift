import Foundation
import MomentsTestSupport
import Testing

/// The built `moments` executable, run as a user would.
@Suite struct ExecutableTests {
    private var executable: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("moments")
    }

    private func run(_ arguments: [String], in directory: URL, interruptAfter: Duration? = nil) async throws -> (status: Int32, out: String, err: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = directory
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        if let interruptAfter {
            try await Task.sleep(for: interruptAfter)
            process.interrupt()
        }
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
    }

    @Test func theDemoRunsTheWholeStoryAndExitsZero() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let result = try await run(["demo"], in: directory.url)

        #expect(result.status == 0, "stderr: \(result.err)")
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("▶ Started the reference BFF at http://127.0.0.1:") == true)
        #expect(lines.contains("Jake Lin (user 0): 4 moments"))
        #expect(lines.contains { $0.contains("stream update (optimistic): ♥ [0] 3 likes (users 1, 2, 0)") })
        #expect(lines.contains { $0.contains("stream update (confirmed): ♡ [0] 2 likes (users 1, 2)") })
        #expect(lines.contains { $0.contains("a refresh now fails as it should: cannot reach") })
        #expect(lines.last?.hasPrefix("✔ Demo complete: fetched 4 moments") == true)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty, "the demo leaves no files behind")
    }

    @Test func theDemoCanKeepItsSQLiteFile() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let result = try await run(["demo", "--store", "sqlite:kept.sqlite"], in: directory.url)

        #expect(result.status == 0, "stderr: \(result.err)")
        #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("kept.sqlite").path))
    }

    @Test func anInterruptedDemoStopsItsBFF() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["demo"]
        process.currentDirectoryURL = directory.url
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()

        // The first line names the BFF's port; interrupt as soon as it is printed.
        var text = ""
        while !text.contains("\n") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        process.interrupt()
        process.waitUntilExit()
        let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last?.split(separator: "/").first.flatMap { Int($0) })

        #expect(process.terminationStatus == 130)
        #expect(await eventually(timeout: .seconds(5)) { !isListening(port) }, "the BFF on port \(port) outlived the demo")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func watchStreamsUntilInterrupted() async throws {
        let bff = try ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let result = try await run(
            ["watch", "--user", "0", "--interval", "0.2", "--base-url", bff.baseURL.absoluteString, "--store", "memory"],
            in: directory.url, interruptAfter: .milliseconds(1500)
        )

        #expect(result.status == 130)
        #expect(result.out.hasPrefix("Jake Lin (user 0): 4 moments"))
        #expect(result.err.contains("watching user 0"))
        #expect(result.err.contains("stopped watching user 0"))
    }

    @Test func helpAndWrongUsage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let help = try await run(["help"], in: directory.url)
        let wrong = try await run(["timeline", "--nope"], in: directory.url)

        #expect(help.status == 0 && help.out.contains("moments demo"))
        #expect(wrong.status == 2)
        #expect(wrong.err == "moments: unknown option --nope for 'timeline'\n")
        #expect(wrong.out.isEmpty)
    }
}

