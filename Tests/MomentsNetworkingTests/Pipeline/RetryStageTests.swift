import Foundation
@testable import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``RetryStage``'s rules, each against a stub of the stages below it.
@Suite struct RetryStageTests {
    private let clock = ManualClock()

    private func pipeline(_ policy: RetryPolicy?, _ next: StubNext, attemptTimeout: Duration? = nil) -> CallPipeline {
        CallPipeline([RetryStage(policy: policy, attemptTimeout: attemptTimeout, clock: clock, instruments: StageHarness.instruments()), next])
    }

    private static let policy = RetryPolicy(maximumAttempts: 4, initialDelay: .milliseconds(100), jitter: 0)

    /// A request that is not repeatable and may have reached the server is never sent
    /// again, policy or not; the error says it may have been processed.
    @Test(arguments: [TransportFailure.Kind.connectionReset, .timedOut, .badResponse, .truncatedResponse, .other])
    func aMutationThatMayHaveArrivedIsNotSentAgain(kind: TransportFailure.Kind) async throws {
        for policy in [nil, Self.policy] {
            let next = StubNext { _, _, _ in throw StageHarness.failure(kind) }
            let error = await #expect(throws: HTTPClientError.self) {
                try await pipeline(policy, next).send(StageHarness.request(.post), StageHarness.call(clock: clock, repeatable: false))
            }
            #expect(next.arrivals == 1)
            #expect(error?.retriesStopped == .mayHaveBeenProcessed)
        }
    }

    /// A failure that certainly sent nothing lets the policy retry even a mutation.
    @Test(arguments: [TransportFailure.Kind.connectionRefused, .hostNotFound, .notConnected, .requestNotSent])
    func aMutationThatCertainlyWasNotSentIsRetriedUnderThePolicy(kind: TransportFailure.Kind) async throws {
        let next = StubNext { arrival, _, _ in
            if arrival == 1 { throw StageHarness.failure(kind) }
            return StageHarness.reply(200)
        }
        let call = StageHarness.call(clock: clock, repeatable: false)
        async let answer = pipeline(Self.policy, next).send(StageHarness.request(.post), call)
        await clock.waitForWakeUps(1)
        clock.advance(by: .milliseconds(100))
        #expect(try await answer.statusCode == 200)
        #expect(next.arrivals == 2)
    }

    /// A repeatable request whose kept-alive connection the server had closed gets one
    /// more attempt at once, without a policy; a second such failure stands.
    @Test func aStaleConnectionCostsARepeatableRequestOneImmediateRetry() async throws {
        let next = StubNext { _, _, _ in throw StageHarness.failure(.connectionReset) }
        await #expect(throws: HTTPClientError.self) {
            try await pipeline(nil, next).send(StageHarness.request(), StageHarness.call(clock: clock))
        }
        #expect(next.arrivals == 2)
        #expect(next.calls.map(\.context.attempt) == [1, 2])
    }

    /// Backoffs wait on the client's clock; each attempt carries its number and what is
    /// left of the call's deadline.
    @Test func backoffsWaitOnTheClockAndAttemptsShareOneDeadline() async throws {
        let next = StubNext { arrival, _, _ in StageHarness.reply(arrival < 3 ? 503 : 200) }
        let call = StageHarness.call(clock: clock, deadline: .seconds(1))
        async let answer = pipeline(Self.policy, next, attemptTimeout: .milliseconds(500)).send(StageHarness.request(), call)
        await clock.waitForWakeUps(1)
        #expect(next.arrivals == 1)
        clock.advance(by: .milliseconds(100))
        await clock.waitForWakeUps(1)
        #expect(next.arrivals == 2)
        clock.advance(by: .milliseconds(200))
        #expect(try await answer.statusCode == 200)
        #expect(next.calls.map(\.context.attempt) == [1, 2, 3])
        let started = call.started
        // Each attempt's deadline: 500 ms from its start, within the call's 1 s.
        #expect(next.calls.map { $0.attemptDeadline - started } == [.milliseconds(500), .milliseconds(600), .milliseconds(800)])
        #expect(next.calls.allSatisfy { $0.deadline == call.deadline })
    }

    /// A retry whose wait ends past the deadline (a loaded machine woke it late) is not
    /// made: the call ends with its last attempt's failure or answer, its retries stopped
    /// by the deadline, and not with a time-out that no attempt had.
    @Test func aRetryWokenPastTheDeadlineEndsWithTheLastAttemptsOutcome() async throws {
        let refused = StubNext { _, _, _ in throw StageHarness.failure(.connectionRefused) }
        let failing = Task { [clock] in
            try await CallPipeline([RetryStage(policy: Self.policy, attemptTimeout: nil, clock: clock, instruments: StageHarness.instruments()), refused])
                .send(StageHarness.request(), StageHarness.call(clock: clock, deadline: .seconds(1)))
        }
        await clock.waitForWakeUps(1)
        clock.advance(by: .seconds(2))
        let error = await #expect(throws: HTTPClientError.self) { try await failing.value }
        #expect(error?.transportFailure?.kind == .connectionRefused, "the refusal, not a time-out: \(String(describing: error))")
        #expect(error?.retriesStopped == .deadline)
        #expect(refused.arrivals == 1)

        let unavailable = StubNext { _, _, _ in StageHarness.reply(503) }
        let call = StageHarness.call(clock: clock, deadline: .seconds(1))
        let answering = Task { [clock] in
            try await CallPipeline([RetryStage(policy: Self.policy, attemptTimeout: nil, clock: clock, instruments: StageHarness.instruments()), unavailable])
                .send(StageHarness.request(), call)
        }
        await clock.waitForWakeUps(1)
        clock.advance(by: .seconds(2))
        #expect(try await answering.value.statusCode == 503)
        #expect(call.record.retriesStopped == .deadline)
        #expect(unavailable.arrivals == 1)
    }

    /// A retry whose backoff would end past the deadline is not made, and says so.
    @Test func noRetryEndsPastTheDeadline() async throws {
        let next = StubNext { _, _, _ in StageHarness.reply(503) }
        let response = try await pipeline(Self.policy, next).send(StageHarness.request(), StageHarness.call(clock: clock, deadline: .milliseconds(100)))
        #expect(response.statusCode == 503)
        #expect(next.arrivals == 1)
        // No attempt starts once the deadline has passed.
        let late = StageHarness.call(clock: clock, deadline: .milliseconds(10))
        clock.advance(by: .milliseconds(10))
        let error = await #expect(throws: HTTPClientError.self) { try await pipeline(Self.policy, next).send(StageHarness.request(), late) }
        #expect(error?.transportFailure?.kind == .timedOut)
        #expect(next.arrivals == 1)
    }

    /// Retries draw on the budget of the origin that failed: a failure charged to another
    /// origin (after a redirect) leaves the call's own origin's budget whole.
    @Test func retriesDrawOnTheBudgetOfTheOriginThatFailed() async throws {
        let home = StageHarness.origin(clock: clock, budget: RetryBudget(ratio: 0, minimumPerSecond: 0, maximumBalance: 1))
        let elsewhere = StageHarness.origin(clock: clock, budget: RetryBudget(ratio: 0, minimumPerSecond: 0, maximumBalance: 1))
        let next = StubNext { arrival, _, call in
            call.record.answered(from: elsewhere)
            return StageHarness.reply(arrival == 1 ? 503 : 200)
        }
        async let answer = pipeline(Self.policy, next).send(StageHarness.request(), StageHarness.call(clock: clock, origin: home))
        await clock.waitForWakeUps(1)
        clock.advance(by: .milliseconds(100))
        #expect(try await answer.statusCode == 200)
        func spendable(_ origin: OriginGuard) -> Int {
            var count = 0
            while count < 10, origin.withdrawRetry(now: clock.now) { count += 1 }
            return count
        }
        // Each began with two: a saved retry and the floor's.
        #expect(spendable(home) == 2, "the call's own origin kept both")
        #expect(spendable(elsewhere) == 1, "the failing origin paid for the retry")
    }
}
