import Foundation
import MomentsTestSupport
import Testing

/// The built `moments` executable, run as a user would.
@Suite struct ExecutableTests {
    @Test func theDemoRunsTheWholeStoryAndExitsZero() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let result = try await MomentsExecutable.run(["demo"], in: directory.url)

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

        let result = try await MomentsExecutable.run(["demo", "--store", "sqlite:kept.sqlite"], in: directory.url)

        #expect(result.status == 0, "stderr: \(result.err)")
        #expect(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("kept.sqlite").path))
    }

    @Test func anInterruptedDemoStopsItsBFF() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = MomentsExecutable.url
        process.arguments = ["demo"]
        process.currentDirectoryURL = directory.url
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()

        // The first line names the BFF's port; interrupt as soon as it is printed.
        // Interrupted from the reading thread the moment the line arrives, so the demo
        // cannot finish first however slowly this task is scheduled.
        let text = await withCheckedContinuation { continuation in
            Thread {
                var text = ""
                while !text.contains("\n") {
                    let chunk = out.fileHandleForReading.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                process.interrupt()
                continuation.resume(returning: text)
            }.start()
        }
        let status = await process.exitStatus()
        let port = try #require(text.split(separator: "\n").first?.split(separator: ":").last?.split(separator: "/").first.flatMap { Int($0) })

        #expect(status == 0, "an interrupt stops the command gracefully")
        #expect(await eventually(timeout: .seconds(5)) { !isListening(port) }, "the BFF on port \(port) outlived the demo")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).isEmpty)
    }

    @Test func watchStreamsUntilInterrupted() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let process = Process()
        process.discardingCoverageProfile()
        process.executableURL = MomentsExecutable.url
        process.arguments = ["watch", "--user", "0", "--interval", "0.2", "--base-url", bff.baseURL.absoluteString, "--store", "memory"]
        process.currentDirectoryURL = directory.url
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()

        // Interrupt once the timeline is printed.
        var first: String?
        for await line in LineReader(out.fileHandleForReading).lines {
            first = line
            break
        }
        process.interrupt()
        let errors = String(decoding: await err.fileHandleForReading.readToEndOffPool(), as: UTF8.self)
        let status = await process.exitStatus()

        #expect(status == 0, "an interrupt stops the command gracefully")
        #expect(first == "Jake Lin (user 0): 4 moments")
        #expect(errors.contains("watching user 0"))
        #expect(errors.contains("stopped watching user 0"))
    }

    /// `watch --all --json` prints the store's change feed as JSON Lines: numbered,
    /// strictly increasing, and carrying a like another client made, as a moment change
    /// naming every watched user whose timeline holds the moment.
    @Test func watchAllPrintsEveryUsersChangesAsJSONLines() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let connection = ["--base-url", bff.baseURL.absoluteString, "--store", "sqlite:s.sqlite"]
        for user in ["0", "1"] {
            let fetched = try await MomentsExecutable.run(["timeline", "--user", user] + connection, in: directory.url)
            #expect(fetched.status == 0, "\(fetched.err)")
        }

        let process = Process()

        process.discardingCoverageProfile()
        process.executableURL = MomentsExecutable.url
        process.arguments = ["watch", "--all", "--json", "--interval", "0.1"] + connection
        process.currentDirectoryURL = directory.url
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var lines: [String] = []
        var liked = false
        for await line in LineReader(out.fileHandleForReading).lines {
            lines.append(line)
            // Once both timelines are loaded, another client likes moment 2 (in both).
            if !liked, lines.contains(where: { $0.contains(#""reason":"loaded""#) && $0.contains(#""user":"1""#) }) {
                liked = true
                let like = try await MomentsExecutable.run(["like", "--user", "3", "--moment", "2", "--base-url", bff.baseURL.absoluteString, "--store", "memory"], in: directory.url)
                #expect(like.status == 0, "\(like.err)")
            }
            if line.contains(#""type":"moment""#) || lines.count > 200 { break }
        }
        process.interrupt()
        let status = await process.exitStatus()

        #expect(status == 0, "an interrupt stops the command gracefully")
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count, "every line is one JSON object")
        let sequences = objects.compactMap { $0["sequence"] as? Int }
        #expect(sequences.count == objects.count && sequences == sequences.sorted() && Set(sequences).count == sequences.count)
        let change = try #require(objects.last)
        #expect(change["type"] as? String == "moment")
        #expect(change["phase"] as? String == "confirmed")
        #expect(change["users"] as? [String] == ["0", "1"])
        let likes = (change["moment"] as? [String: Any])?["likes"] as? [[String: Any]]
        #expect(likes?.contains { $0["id"] as? String == "3" } == true)
    }

    @Test func helpAndWrongUsage() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }

        let help = try await MomentsExecutable.run(["help"], in: directory.url)
        let wrong = try await MomentsExecutable.run(["timeline", "--nope"], in: directory.url)

        #expect(help.status == 0 && help.out.contains("moments demo"))
        #expect(wrong.status == 2)
        #expect(wrong.err == "moments: unknown option --nope for 'timeline'\n")
        #expect(wrong.out.isEmpty)
    }
}

