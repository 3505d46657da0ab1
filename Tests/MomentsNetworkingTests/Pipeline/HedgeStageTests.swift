import Foundation
@testable import MomentsNetworking
import MomentsSupport
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

    /// No hedge goes while the origin has ``HedgingPolicy/maximumAttemptsInFlight``
    /// attempts in flight, the slow one included: the delay ends and the call waits for
    /// its own attempt. With one fewer in flight, the same slow attempt is hedged. Every
    /// attempt the breaker stage counted is counted out when the call returns.
    @Test(arguments: [true, false])
    func aHedgeGoesOnlyWhileTheOriginIsNotBusy(busy: Bool) async throws {
        let clock = clock
        let origin = StageHarness.origin(clock: clock, hedging: HedgingPolicy(delay: .fixed(.milliseconds(50)), maximumAttemptsInFlight: 3))
        // Other requests' attempts: with the slow one, 3 in flight (the limit), or 2.
        let others = busy ? 2 : 1
        for _ in 0..<others { _ = origin.admit(now: clock.now) }
        let next = StubNext { arrival, _, _ in
            if arrival == 1 { try await clock.sleep(for: .seconds(1)) }
            return HTTPResponse(statusCode: 200, body: Data("attempt \(arrival)".utf8))
        }
        let origins = OriginGuards(baseURL: StageHarness.url) { origin }
        let pipeline = CallPipeline([
            HedgeStage(clock: clock, failureStatuses: [503]),
            BreakerStage(clock: clock, instruments: StageHarness.instruments(), origins: origins),
            next,
        ])
        async let answer = pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, hedges: true, origin: origin))
        await clock.waitForWakeUps(2)  // the first attempt's answer, and the hedging delay
        #expect(origin.attemptsInFlight == others + 1)
        clock.advance(by: .milliseconds(50))
        // The delay's end reaches the call before the first attempt's answer (the race
        // hands them over in order), so the hedge is decided before that answer.
        if busy { clock.advance(by: .seconds(1)) }

        #expect(String(decoding: try await answer.body, as: UTF8.self) == (busy ? "attempt 1" : "attempt 2"))
        #expect(next.arrivals == (busy ? 1 : 2))
        #expect(origin.attemptsInFlight == others)
    }

    /// The hedge carries the caller's task-local values, as the first attempt does: it is
    /// started from the caller's task, not from the thread the delay ended on.
    @Test func theHedgeCarriesTheCallersTaskLocalValues() async throws {
        let clock = clock
        let next = StubNext { arrival, _, _ in
            if arrival == 1 { try await clock.sleep(for: .seconds(3_600)) }
            return HTTPResponse(statusCode: 200, body: Data("attempt \(arrival) for \(Caller.name ?? "nobody")".utf8))
        }
        let pipeline = CallPipeline([HedgeStage(clock: clock, failureStatuses: [503]), next])
        let call = StageHarness.call(clock: clock, hedges: true, origin: origin())
        async let answer = Caller.$name.withValue("Ada") { try await pipeline.send(StageHarness.request(), call) }
        await clock.waitForWakeUps(2)  // the first attempt's answer, and the hedging delay
        clock.advance(by: .milliseconds(50))
        #expect(String(decoding: try await answer.body, as: UTF8.self) == "attempt 2 for Ada")
    }

    /// A call returns only once its hedge has ended: the first attempt wins, the hedge is
    /// cancelled, and the call waits for it to finish winding down.
    @Test func aCallReturnsOnlyOnceItsHedgeHasEnded() async throws {
        let clock = clock
        let hedgeArrived = Latch(), hedgeCancelled = Latch()
        let hedgeEnded = PThreadMutex(false)
        let next = StubNext { arrival, _, _ in
            if arrival == 1 {
                try await clock.sleep(for: .seconds(1))
                return HTTPResponse(statusCode: 200, body: Data("attempt 1".utf8))
            }
            hedgeArrived.open()
            await withTaskCancellationHandler { await hedgeCancelled.wait() } onCancel: { hedgeCancelled.open() }
            // Winding down takes a while: a few turns of the executor.
            for _ in 0..<100 { await Task.yield() }
            hedgeEnded.withLock { $0 = true }
            throw HTTPClientError.cancelled()
        }
        let pipeline = CallPipeline([HedgeStage(clock: clock, failureStatuses: [503]), next])
        let call = StageHarness.call(clock: clock, hedges: true, origin: origin())
        async let answer = pipeline.send(StageHarness.request(), call)
        await clock.waitForWakeUps(2)  // the first attempt's answer, and the hedging delay
        clock.advance(by: .milliseconds(50))
        await hedgeArrived.wait()
        clock.advance(by: .seconds(1))
        #expect(String(decoding: try await answer.body, as: UTF8.self) == "attempt 1")
        #expect(hedgeEnded.withLock { $0 }, "the call returned before its hedge ended")
        #expect(next.arrivals == 2)
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

/// A task-local value the caller binds, for the hedge to read.
private enum Caller {
    @TaskLocal static var name: String?
}
