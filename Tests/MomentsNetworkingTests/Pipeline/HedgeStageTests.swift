import Foundation
@testable import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``HedgeStage``: a second attempt after the hedging delay, the first good answer wins,
/// and the delay is a wake-up on the client's clock.
@Suite struct HedgeStageTests {
    private let clock = ManualClock()

    private func origin() -> OriginGuard {
        StageHarness.origin(clock: clock, hedging: HedgingPolicy(delay: .fixed(.milliseconds(50))))
    }

    @Test func aSlowAttemptIsHedgedAfterTheDelayAndTheFirstGoodAnswerWins() async throws {
        let clock = clock
        let next = StubNext { arrival, _, call in
            // The first attempt answers in an hour, unless cancelled (as a transport is).
            if arrival == 1 { try await clock.sleep(for: .seconds(3_600)) }
            return HTTPResponse(statusCode: 200, body: Data("attempt \(arrival) coalesces \(call.coalesces)".utf8))
        }
        let pipeline = CallPipeline([HedgeStage(clock: clock, failureStatuses: [503]), next])
        let call = StageHarness.call(clock: clock, hedges: true, coalesces: true, origin: origin())
        async let answer = pipeline.send(StageHarness.request(), call)
        await clock.waitForWakeUps(2)  // the first attempt's answer, and the hedging delay
        #expect(next.arrivals == 1)
        clock.advance(by: .milliseconds(50))
        #expect(String(decoding: try await answer.body, as: UTF8.self) == "attempt 2 coalesces false")
        #expect(clock.pendingWakeUps == 0, "the slow attempt was cancelled, the delay spent")
    }

    /// A request that is not repeatable, or whose call does not hedge, goes once.
    @Test func onlyRepeatableHedgedCallsAreHedged() async throws {
        for (repeatable, hedges) in [(false, true), (true, false)] {
            let next = StubNext { _, _, _ in StageHarness.reply(200) }
            let pipeline = CallPipeline([HedgeStage(clock: clock, failureStatuses: [503]), next])
            _ = try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, repeatable: repeatable, hedges: hedges, origin: origin()))
            #expect(next.arrivals == 1)
            #expect(clock.pendingWakeUps == 0)
        }
    }
}
