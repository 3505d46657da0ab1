import Foundation
import MomentsSupport

/// Runs one simulated schedule, reporting one that does not end within `deadline` as a
/// failure (with the progress it last reported) instead of hanging the test run.
///
/// The schedule runs in an unstructured task, so a schedule stuck forever does not hold
/// the test with it. The watchdog is a hang detector, not a wait: the schedule's end
/// cancels it.
func runSchedule(deadline: Duration, _ schedule: @escaping @Sendable (Locked<String?>) async -> [String]) async -> [String] {
    let stuck = Locked<String?>(nil)
    let waiter = Locked<CheckedContinuation<[String], Never>?>(nil)
    let finish: @Sendable ([String]) -> Void = { failures in
        var continuation: CheckedContinuation<[String], Never>?
        waiter.update { continuation = $0; $0 = nil }
        continuation?.resume(returning: failures)
    }
    return await withCheckedContinuation { continuation in
        waiter.update { $0 = continuation }
        let watchdog = Task {
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            finish(["the schedule did not end within \(deadline): \(stuck.value ?? "?")"])
        }
        Task {
            let failures = await schedule(stuck)
            watchdog.cancel()
            finish(failures)
        }
    }
}

/// Lets the code under test react to a simulation's last step: yields until
/// `signature` (what the simulation can observe) stays the same four yields in a row,
/// at most 400 yields.
func yieldUntilStable(_ signature: () async -> [Int]) async {
    var last = await signature()
    var stable = 0
    for _ in 0..<400 {
        await Task.yield()
        let now = await signature()
        if now == last {
            stable += 1
            if stable >= 4 { return }
        } else {
            stable = 0
            last = now
        }
    }
}

/// Runs seeded schedules: `<prefix>_SEED=S` replays S alone, `<prefix>_SCHEDULES=N`
/// runs 1…N (`defaultCount` by default). A failing schedule is recorded with the command
/// that replays it; after five failures the rest are skipped. With `_SCHEDULES` set, a
/// summary goes to standard error.
func runSeededSchedules(
    prefix: String, defaultCount: UInt64, suite: String, _ schedule: (UInt64) async -> [String]
) async -> (seeds: Int, failures: [(seed: UInt64, details: [String])]) {
    let environment = ProcessInfo.processInfo.environment
    let seeds: [UInt64]
    if let replay = environment["\(prefix)_SEED"].flatMap(UInt64.init) {
        seeds = [replay]
    } else {
        seeds = Array(1...max(1, environment["\(prefix)_SCHEDULES"].flatMap(UInt64.init) ?? defaultCount))
    }
    var failures: [(seed: UInt64, details: [String])] = []
    let started = ContinuousClock.now
    for seed in seeds {
        let details = await schedule(seed)
        guard !details.isEmpty else { continue }
        failures.append((seed, details))
        if failures.count >= 5 { break }
    }
    if environment["\(prefix)_SCHEDULES"] != nil {
        let summary = "\(suite): \(seeds.count) schedules, \(failures.count) failed, \(ContinuousClock.now - started)\n"
        FileHandle.standardError.write(Data(summary.utf8))
    }
    return (seeds.count, failures)
}

/// A value shared between tasks.
final class Locked<Value: Sendable>: Sendable {
    private let storage: PThreadMutex<Value>

    init(_ value: Value) { storage = PThreadMutex(value) }

    var value: Value { storage.withLock { $0 } }

    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
