import Foundation
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// Several instances sharing storage and a change bus, attacked by seeded random
/// schedules (see ``SharedStoreSimulation``).
///
/// Each schedule runs against both models of the server's `isLiked`.
/// `MOMENTS_SHARED_SIMULATION_SCHEDULES=N` runs N schedules per model (150 by default);
/// `MOMENTS_SHARED_SIMULATION_SEED=S` replays schedule S alone;
/// `MOMENTS_SIMULATION_TRACE=1` prints each step, `MOMENTS_SIMULATION_TRACE=failures`
/// only those of failing schedules. A failure names its seed.
@Suite(.ownThread) struct SharedStoreSimulationTests {
    @Test(arguments: SimulatedServer.IsLikedModel.allCases)
    func everyInstanceAndTheSharedStorageConvergeToTheServer(model: SimulatedServer.IsLikedModel) async throws {
        let result = await runSeededSchedules(prefix: "MOMENTS_SHARED_SIMULATION", defaultCount: 150, suite: "shared simulation, \(model) isLiked") { seed in
            await SharedStoreSimulation(seed: seed, model: model).runWithDeadline(.seconds(120))
        }
        for failure in result.failures {
            Issue.record("schedule \(failure.seed), \(model) isLiked, failed (replay: MOMENTS_SHARED_SIMULATION_SEED=\(failure.seed) swift test --filter SharedStoreSimulationTests):\n  \(failure.details.joined(separator: "\n  "))")
        }
    }

    /// Schedules that once failed: an instance evicted a moment whose like it had
    /// confirmed, then loaded it again from a row another instance had replaced with an
    /// older value of overlapping interval, and showed the like undone (the row now keeps
    /// the like's answer: ``LikeConfirmation``).
    @Test(arguments: [62283, 93871] as [UInt64], SimulatedServer.IsLikedModel.allCases)
    func anEvictedMomentLoadedAgainKeepsItsConfirmedLike(seed: UInt64, model: SimulatedServer.IsLikedModel) async {
        let failures = await SharedStoreSimulation(seed: seed, model: model).runWithDeadline(.seconds(120))
        #expect(failures.isEmpty, "schedule \(seed), \(model) isLiked:\n  \(failures.joined(separator: "\n  "))")
    }
}
