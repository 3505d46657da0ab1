import Foundation
@testable import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsSupport

/// ``ConcurrencyLimitStage``: the wait for a slot is part of the call's one deadline, and
/// a wait that ended leaves nothing behind.
@Suite struct ConcurrencyLimitStageTests {
    private let clock = ManualClock()

    @Test func theWaitForASlotEndsAtTheCallsDeadline() async throws {
        let gate = Latch()
        let next = StubNext { _, _, _ in
            await gate.wait()
            return StageHarness.reply(200)
        }
        let limiter = ConcurrencyLimiter(limit: 1, clock: clock)
        let pipeline = CallPipeline([ConcurrencyLimitStage(limiter: limiter), next])
        async let first = pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, deadline: .seconds(5)))
        while next.arrivals < 1 { await Task.yield() }
        async let second = Result(awaiting: { try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, deadline: .seconds(5))) })
        await clock.waitForWakeUps(1)
        #expect(limiter.waiting == 1)
        clock.advance(by: .seconds(5))
        let error = await second.error as? HTTPClientError
        #expect(error?.transportFailure?.kind == .timedOut, "\(String(describing: error))")
        #expect(next.arrivals == 1, "the waiting call never went out")
        gate.open()
        #expect(try await first.statusCode == 200)
        #expect(limiter.waiting == 0)
    }

    /// A call that got its slot leaves no wake-up armed for its deadline: a burst of
    /// queued calls costs nothing once they have run.
    @Test func aCallThatGotItsSlotLeavesNoWakeUpBehind() async throws {
        let gate = Latch()
        let next = StubNext { _, _, _ in
            await gate.wait()
            return StageHarness.reply(200)
        }
        let limiter = ConcurrencyLimiter(limit: 1, clock: clock)
        let pipeline = CallPipeline([ConcurrencyLimitStage(limiter: limiter), next])
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<50 {
                group.addTask { try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, deadline: .seconds(60))).statusCode }
            }
            await clock.waitForWakeUps(49)
            #expect(limiter.waiting == 49)
            gate.open()
            for try await status in group { #expect(status == 200) }
        }
        #expect(next.arrivals == 50)
        #expect(clock.pendingWakeUps == 0)
    }
}
