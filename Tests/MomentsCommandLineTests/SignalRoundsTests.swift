import Foundation
import Moments
import MomentsSQLite
import MomentsSupport
import MomentsTestSupport
import Testing

/// `moments watch` and `moments demo` stopped by SIGINT or SIGTERM at seeded random
/// moments, from the first instruction of the process: each exits 0 (the graceful path:
/// the fallback exits 130 or 143 after ``Interrupts/gracefulDeadline``), leaves no BFF
/// or file behind, and leaves its store readable with what it had confirmed.
///
/// Each starts as a shell starts it, with no signal blocked. Its delay counts from the
/// moment the launcher's first instruction has run, seen from outside: SIGINT and
/// SIGTERM show as blocked in `/proc/<pid>/status`, or the process has already become
/// the program. Half the rounds land in the first 30 ms, while the program's dynamic
/// loader maps its libraries. (Before the first instruction, the kernel ends any
/// process a signal reaches.)
///
/// `MOMENTS_SIGNAL_SEED=S` replays one seed; the seed of every round is in its message.
@Suite struct SignalRoundsTests {
    @Test func watchAndDemoStopGracefullyWhenEverTheSignalComes() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let seed = ProcessInfo.processInfo.environment["MOMENTS_SIGNAL_SEED"].flatMap(UInt64.init) ?? UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        for round in 0..<10 {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let isDemo = Bool.random(using: &generator)
            let signal = Bool.random(using: &generator) ? SIGINT : SIGTERM
            // From its first instruction: in the loader's window, or up to well after the
            // first refresh.
            let delay = Bool.random(using: &generator)
                ? Int.random(in: 0...30, using: &generator)
                : Int.random(in: 0...(isDemo ? 250 : 400), using: &generator)
            let process = Process()
            process.discardingCoverageProfile()
            process.executableURL = MomentsExecutable.url
            process.arguments = isDemo
                ? ["demo", "--store", "sqlite:demo.sqlite"]
                : ["watch", "--user", "0", "--interval", "0.1", "--base-url", bff.baseURL.absoluteString, "--store", "sqlite:watch.sqlite"]
            process.currentDirectoryURL = directory.url
            process.standardOutput = FileHandle.nullDevice
            let errors = Pipe()
            process.standardError = errors
            try await process.runWithNoSignalBlocked()
            let pid = process.processIdentifier
            // The delay is the input of the round, not a wait for something: whenever the
            // signal lands, the outcome must be the same.
            Thread {
                Self.waitForTheFirstInstruction(of: pid)
                usleep(UInt32(delay) * 1000)
                kill(pid, signal)
            }.start()
            async let text = errors.fileHandleForReading.readToEndOffPool()
            let status = await process.exitStatus()
            let said = String(decoding: await text, as: UTF8.self)
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

    /// Returns once the launcher `pid` has run its first instruction (SIGINT and SIGTERM
    /// blocked), once it has become the program (its executable is another file), or
    /// once it has ended (or is a zombie). It polls `/proc`, which reports each of these states.
    private static func waitForTheFirstInstruction(of pid: Int32) {
        let interrupts: UInt64 = 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)
        let launcher = MomentsExecutable.url.resolvingSymlinksInPath().path
        while true {
            guard let blocked = ProcessResources.status("SigBlk", of: String(pid)).flatMap({ UInt64($0, radix: 16) }),
                  ProcessResources.status("State", of: String(pid))?.hasPrefix("Z") == false else { return }
            if blocked & interrupts == interrupts { return }
            let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? launcher
            if executable != launcher { return }
            usleep(50)
        }
    }
}
