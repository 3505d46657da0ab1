import Foundation
@testable import MomentsNetworking
import MomentsSupport
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// A hedged attempt against seeded random scripts: when each attempt answers (or fails,
/// or stalls until cancelled), with what, and whether the call is cancelled on the way;
/// the clock moves in small steps with the executor's turns between them, so the
/// attempts' ends, the hedging delay and the cancellation meet in many orders.
///
/// Whatever the order:
/// - a call that was not cancelled gets a good answer if and only if an attempt answered
///   well, and fails only with an attempt's own failure;
/// - at most one hedge goes;
/// - when the call returns, every attempt has ended, the breaker counts none in flight,
///   and no wake-up is left on the clock.
@Suite struct HedgeRaceOrderingTests {
    /// What one attempt does.
    private struct AttemptScript: CustomStringConvertible {
        /// When it ends, in 10 ms steps after it starts; `nil`: only when cancelled.
        var ends: Int?
        var status: Int
        var fails: Bool

        init(_ generator: inout SeededGenerator) {
            ends = Int.random(in: 0..<10, using: &generator) == 0 ? nil : Int.random(in: 0...20, using: &generator)
            status = Bool.random(using: &generator) ? 200 : 503
            fails = Int.random(in: 0..<4, using: &generator) == 0
        }

        var description: String { "\(fails ? "fails" : "\(status)") after \(ends.map { "\($0 * 10) ms" } ?? "cancellation")" }
    }

    private struct Script: CustomStringConvertible {
        var first: AttemptScript
        var hedge: AttemptScript
        /// The step at which the call is cancelled, if it is.
        var cancelAt: Int?

        init(_ generator: inout SeededGenerator) {
            first = AttemptScript(&generator)
            hedge = AttemptScript(&generator)
            cancelAt = Int.random(in: 0..<4, using: &generator) == 0 ? Int.random(in: 0...25, using: &generator) : nil
            // Without a cancellation, an attempt that never ends would keep the call
            // waiting when the other fails: it answers late instead.
            if cancelAt == nil {
                first.ends = first.ends ?? 30
                hedge.ends = hedge.ends ?? 30
            }
        }

        var description: String { "first \(first), hedge \(hedge), cancelled at \(cancelAt.map { "step \($0)" } ?? "no step")" }
    }

    private final class Attempts: Sendable {
        private struct State {
            var running = 0
            var good = 0
            var arrivals = 0
        }
        private let state = PThreadMutex(State())
        var running: Int { state.withLock { $0.running } }
        var good: Int { state.withLock { $0.good } }
        var arrivals: Int { state.withLock { $0.arrivals } }

        func began() -> Int {
            state.withLock { state in
                state.arrivals += 1
                state.running += 1
                return state.arrivals
            }
        }

        func ended(good: Bool) {
            state.withLock { state in
                state.running -= 1
                if good { state.good += 1 }
            }
        }
    }

    @Test(arguments: 0..<8)
    func everyOrderOfAttemptsDelayAndCancellationKeepsTheRules(batch: UInt64) async throws {
        for seed in batch * 40..<(batch + 1) * 40 {
            try await run(seed: seed)
        }
    }

    private func run(seed: UInt64) async throws {
        var generator = SeededGenerator(seed: seed &+ 0x9E37_79B9)
        let script = Script(&generator)
        let clock = ManualClock()
        let attempts = Attempts()
        let next = StubNext { _, _, _ in
            let arrival = attempts.began()
            let attempt = arrival == 1 ? script.first : script.hedge
            do {
                if let ends = attempt.ends {
                    if ends > 0 { try await clock.sleep(for: .milliseconds(10 * ends)) }
                } else {
                    await waitUntilCancelled()
                    throw HTTPClientError.cancelled()
                }
            } catch {
                attempts.ended(good: false)
                throw error
            }
            attempts.ended(good: !attempt.fails && attempt.status == 200)
            if attempt.fails { throw StageHarness.failure(.connectionReset) }
            return HTTPResponse(statusCode: attempt.status, body: Data("attempt \(arrival)".utf8))
        }
        let origin = StageHarness.origin(clock: clock, hedging: HedgingPolicy(delay: .fixed(.milliseconds(50))))
        let origins = OriginGuards(baseURL: StageHarness.url) { origin }
        let pipeline = CallPipeline([
            HedgeStage(clock: clock, failureStatuses: [503]),
            BreakerStage(clock: clock, instruments: StageHarness.instruments(), origins: origins),
            next,
        ])
        let call = StageHarness.call(clock: clock, hedges: true, origin: origin)
        let outcome = PThreadMutex<Result<HTTPResponse, any Error>?>(nil)
        let caller = Task {
            let result = await Result(awaiting: { try await pipeline.send(StageHarness.request(), call) })
            outcome.withLock { $0 = result }
        }
        // Steps of 10 ms, with turns of the executor between them, until the call ends.
        // The bound on a call that never ends counts steps, not seconds: the loop's turns
        // and the call's jobs wait in the same executor, so every turn lets the call's
        // ready jobs run, and 10,000 steps (100 s on the clock, far past every script)
        // come only after tens of thousands of turns. A bound in real time would count a
        // slow executor as a hang: beside two compilers, one turn of its queue, shared with
        // every other test's work, has taken over 30 s on a 2-core machine.
        var step = 0
        var turns = 0
        while outcome.withLock({ $0 == nil }) {
            if step == script.cancelAt { call.task.cancel() }
            for _ in 0..<Int.random(in: 1...4, using: &generator) { await Task.yield() }
            turns += 1
            if turns % 4 == 0 {
                clock.advance(by: .milliseconds(10))
                step += 1
            }
            if step > 10_000 {
                Issue.record(
                    """
                    seed \(seed): the call never ended (\(script)); attempts begun \(attempts.arrivals), running \(attempts.running), \
                    wake-ups on the clock \(clock.pendingWakeUps), call cancelled \(call.task.isCancelled)
                    """)
                caller.cancel()
                return
            }
        }
        await caller.value
        let result = try #require(outcome.withLock { $0 }, "seed \(seed)")
        let cancelled = script.cancelAt.map { $0 <= step } ?? false

        #expect(attempts.running == 0, "seed \(seed): an attempt still ran when the call returned (\(script))")
        #expect(origin.attemptsInFlight == 0, "seed \(seed): the breaker still counts an attempt (\(script))")
        #expect(clock.pendingWakeUps == 0, "seed \(seed): a wake-up was left on the clock (\(script))")
        #expect(attempts.arrivals <= 2, "seed \(seed): more than one hedge (\(script))")
        if !cancelled {
            let goodAnswer = (try? result.get()).map { $0.statusCode == 200 } ?? false
            #expect(goodAnswer == (attempts.good > 0), "seed \(seed): good answer \(goodAnswer), attempts that answered well \(attempts.good) (\(script))")
        }
    }
}
