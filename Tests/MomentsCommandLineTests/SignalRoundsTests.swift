import Foundation
import Moments
import MomentsSQLite
import MomentsSupport
import MomentsTestSupport
import Testing

/// `moments watch` and `moments demo` stopped by SIGINT or SIGTERM at seeded random
/// moments, from the first instant their own code runs: each exits 0 (the graceful
/// path: the fallback exits 130 or 143 after ``Interrupts/gracefulDeadline``), leaves
/// no BFF or file behind, and leaves its store readable with what it had confirmed.
///
/// Each starts as a shell starts it, with no signal blocked. Its delay counts from the
/// moment its own code runs: a preloaded library (``StartupProbe``), initialised just
/// after the executable's `.preinit_array` has blocked SIGINT and SIGTERM, says so on
/// standard error. Before that the dynamic loader is still mapping and relocating its
/// libraries (about 15 ms here), and a signal then ends any process that links them,
/// before any of its code could run. `StartupSignalTests` covers the instants just after.
///
/// `MOMENTS_SIGNAL_SEED=S` replays one seed; the seed of every round is in its message.
@Suite struct SignalRoundsTests {
    @Test func watchAndDemoStopGracefullyWhenEverTheSignalComes() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let seed = ProcessInfo.processInfo.environment["MOMENTS_SIGNAL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let probeDirectory = try TemporaryDirectory()
        defer { probeDirectory.remove() }
        let probe = try await StartupProbe.build(in: probeDirectory.url)
        for round in 0..<10 {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let isDemo = Bool.random(using: &generator)
            let signal = Bool.random(using: &generator) ? SIGINT : SIGTERM
            // From the first instant of its code to well after the first refresh.
            let delay = Int.random(in: 0...(isDemo ? 250 : 400), using: &generator)
            let process = Process()
            process.discardingCoverageProfile()
            process.environment = (process.environment ?? ProcessInfo.processInfo.environment).merging(probe.environment()) { $1 }
            process.executableURL = MomentsExecutable.url
            process.arguments = isDemo
                ? ["demo", "--store", "sqlite:demo.sqlite"]
                : ["watch", "--user", "0", "--interval", "0.1", "--base-url", bff.baseURL.absoluteString, "--store", "sqlite:watch.sqlite"]
            process.currentDirectoryURL = directory.url
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            try await process.runWithNoSignalBlocked()
            // Until the process's own code runs (or it ended).
            let started = await errors.fileHandleForReading.readThroughLine(StartupProbe.startedLine)
            // The delay is the input of the round, not a wait for something: whenever the
            // signal lands, the outcome must be the same.
            let pid = process.processIdentifier
            Thread {
                usleep(UInt32(delay) * 1000)
                kill(pid, signal)
            }.start()
            async let text = errors.fileHandleForReading.readToEndOffPool()
            let status = await process.exitStatus()
            let said = String(decoding: started + (await text), as: UTF8.self)
            let name = "round \(round) (seed \(seed), replay: MOMENTS_SIGNAL_SEED=\(seed)): \(isDemo ? "demo" : "watch"), signal \(signal) after \(delay) ms"

            #expect(status == 0, "\(name): exit status \(status); stderr: \(said)")
            let file = directory.url.appendingPathComponent(isDemo ? "demo.sqlite" : "watch.sqlite").path
            if FileManager.default.fileExists(atPath: file) {
                // Whatever the moment, the file opens and every timeline in it reads whole.
                let persistence = try SQLitePersistence(path: file)
                for user in try await persistence.userIDs() {
                    let timeline = try await persistence.load(userID: user)
                    #expect(timeline?.moments.isEmpty == false, "\(name): user \(user)'s stored timeline")
                }
                await persistence.close()
            }
        }
    }
}
