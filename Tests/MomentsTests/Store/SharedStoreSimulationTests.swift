import Foundation
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// Several instances sharing storage and a change bus, attacked by seeded random
/// schedules (see ``SharedStoreSimulation``).
///
/// Each schedule runs against both models of the server's `isLiked`.
/// `MOMENTS_SHARED_SIMULATION_SCHEDULES=N` runs N schedules per model (250 by default);
/// `MOMENTS_SHARED_SIMULATION_SEED=S` replays schedule S alone;
/// `MOMENTS_SIMULATION_TRACE=1` prints each step, `MOMENTS_SIMULATION_TRACE=failures`
/// only those of failing schedules. A failure names its seed.
@Suite(.ownThread) struct SharedStoreSimulationTests {
    @Test(arguments: SimulatedServer.IsLikedModel.allCases)
    func everyInstanceAndTheSharedStorageConvergeToTheServer(model: SimulatedServer.IsLikedModel) async throws {
        let result = await runSeededSchedules(prefix: "MOMENTS_SHARED_SIMULATION", defaultCount: 250, suite: "shared simulation, \(model) isLiked") { seed in
            await SharedStoreSimulation(seed: seed, model: model).runWithDeadline(.seconds(120))
        }
        for failure in result.failures {
            Issue.record("schedule \(failure.seed), \(model) isLiked, failed (replay: MOMENTS_SHARED_SIMULATION_SEED=\(failure.seed) swift test --filter SharedStoreSimulationTests):\n  \(failure.details.joined(separator: "\n  "))")
        }
    }
}
