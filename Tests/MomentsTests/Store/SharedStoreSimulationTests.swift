import Foundation
import MomentsTestSupport
import Testing

/// Several instances sharing storage and a change bus, attacked by seeded random
/// schedules (see ``SharedStoreSimulation``).
///
/// `MOMENTS_SHARED_SIMULATION_SCHEDULES=N` runs N schedules (500 by default);
/// `MOMENTS_SHARED_SIMULATION_SEED=S` replays schedule S alone;
/// `MOMENTS_SIMULATION_TRACE=1` prints each step, `MOMENTS_SIMULATION_TRACE=failures`
/// only those of failing schedules. A failure names its seed.
@Suite struct SharedStoreSimulationTests {
    @Test func everyInstanceAndTheSharedStorageConvergeToTheServer() async throws {
        let result = await runSeededSchedules(prefix: "MOMENTS_SHARED_SIMULATION", defaultCount: 500, suite: "shared simulation") { seed in
            await SharedStoreSimulation(seed: seed).runWithDeadline(.seconds(120))
        }
        for failure in result.failures {
            Issue.record("schedule \(failure.seed) failed (replay: MOMENTS_SHARED_SIMULATION_SEED=\(failure.seed) swift test --filter SharedStoreSimulationTests):\n  \(failure.details.joined(separator: "\n  "))")
        }
    }
}
