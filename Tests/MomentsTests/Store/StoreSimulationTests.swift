import Foundation
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// The ordering rule, attacked by seeded random schedules (see ``StoreSimulation``).
///
/// Each schedule runs against both models of the server's `isLiked` (see
/// ``SimulatedServer/IsLikedModel``). `MOMENTS_SIMULATION_SCHEDULES=N` runs N schedules
/// per model (500 by default);
/// `MOMENTS_SIMULATION_SEED=S` replays schedule S alone; `MOMENTS_SIMULATION_STEPS=K`
/// gives each schedule K steps. A failure names its seed.
@Suite(.ownThread) struct StoreSimulationTests {
    @Test(arguments: SimulatedServer.IsLikedModel.allCases)
    func everyScheduleConvergesToTheServerAndNoConfirmedValueGoesBack(model: SimulatedServer.IsLikedModel) async throws {
        let steps = ProcessInfo.processInfo.environment["MOMENTS_SIMULATION_STEPS"].flatMap(Int.init)
        let result = await runSeededSchedules(prefix: "MOMENTS_SIMULATION", defaultCount: 500, suite: "simulation, \(model) isLiked") { seed in
            var simulation = StoreSimulation(seed: seed, model: model)
            if let steps { simulation.steps = steps }
            return await simulation.runWithDeadline(.seconds(120))
        }
        for failure in result.failures {
            Issue.record("schedule \(failure.seed), \(model) isLiked, failed (replay: MOMENTS_SIMULATION_SEED=\(failure.seed) swift test --filter StoreSimulationTests):\n  \(failure.details.joined(separator: "\n  "))")
        }
    }
}
