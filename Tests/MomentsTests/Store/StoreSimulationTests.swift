import Foundation
import MomentsTestSupport
import Testing

/// The ordering rule, attacked by seeded random schedules (see ``StoreSimulation``).
///
/// `MOMENTS_SIMULATION_SCHEDULES=N` runs N schedules (1,000 by default);
/// `MOMENTS_SIMULATION_SEED=S` replays schedule S alone. A failure names its seed.
@Suite struct StoreSimulationTests {
    @Test func everyScheduleConvergesToTheServerAndNoConfirmedValueGoesBack() async throws {
        let environment = ProcessInfo.processInfo.environment
        let seeds: [UInt64]
        if let replay = environment["MOMENTS_SIMULATION_SEED"].flatMap(UInt64.init) {
            seeds = [replay]
        } else {
            let count = environment["MOMENTS_SIMULATION_SCHEDULES"].flatMap(UInt64.init) ?? 1_000
            seeds = Array(1...max(1, count))
        }
        var failed = 0
        let started = ContinuousClock.now
        for seed in seeds {
            var simulation = StoreSimulation(seed: seed)
            if let steps = environment["MOMENTS_SIMULATION_STEPS"].flatMap(Int.init) { simulation.steps = steps }
            let failures = await simulation.runWithDeadline(.seconds(30))
            guard !failures.isEmpty else { continue }
            failed += 1
            let details = failures.joined(separator: "\n  ")
            Issue.record("schedule \(seed) failed (replay: MOMENTS_SIMULATION_SEED=\(seed) swift test --filter StoreSimulationTests):\n  \(details)")
            if failed >= 5 { break }
        }
        if environment["MOMENTS_SIMULATION_SCHEDULES"] != nil {
            let elapsed = ContinuousClock.now - started
            FileHandle.standardError.write(Data("simulation: \(seeds.count) schedules, \(failed) failed, \(elapsed)\n".utf8))
        }
    }
}
