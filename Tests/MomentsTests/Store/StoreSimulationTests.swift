import Foundation
import MomentsTestSupport
import Testing

/// The ordering rule, attacked by seeded random schedules (see ``StoreSimulation``).
///
/// `MOMENTS_SIMULATION_SCHEDULES=N` runs N schedules (1,000 by default);
/// `MOMENTS_SIMULATION_SEED=S` replays schedule S alone; `MOMENTS_SIMULATION_STEPS=K`
/// gives each schedule K steps. A failure names its seed.
@Suite struct StoreSimulationTests {
    @Test func everyScheduleConvergesToTheServerAndNoConfirmedValueGoesBack() async throws {
        let steps = ProcessInfo.processInfo.environment["MOMENTS_SIMULATION_STEPS"].flatMap(Int.init)
        let result = await runSeededSchedules(prefix: "MOMENTS_SIMULATION", defaultCount: 1_000, suite: "simulation") { seed in
            var simulation = StoreSimulation(seed: seed)
            if let steps { simulation.steps = steps }
            return await simulation.runWithDeadline(.seconds(120))
        }
        for failure in result.failures {
            Issue.record("schedule \(failure.seed) failed (replay: MOMENTS_SIMULATION_SEED=\(failure.seed) swift test --filter StoreSimulationTests):\n  \(failure.details.joined(separator: "\n  "))")
        }
    }
}
