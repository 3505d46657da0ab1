import Foundation
@testable import MomentsNetworking
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``RedirectStage`` and ``BreakerStage`` together: each hop runs under the breaker of
/// the origin it goes to, and its failures are charged there alone.
@Suite struct RedirectAndBreakerStageTests {
    private let clock = ManualClock()
    private let failing = URL(string: "https://failing.example.com/b")!

    private func stages(_ origins: OriginGuards, _ next: StubNext) -> CallPipeline {
        CallPipeline([
            RedirectStage(policy: .anyOrigin, identityNames: IdentityHeaderNames(configured: [], authenticationHeader: nil), origins: origins),
            BreakerStage(clock: clock, instruments: StageHarness.instruments(), origins: origins),
            next,
        ])
    }

    @Test func aFailingOriginReachedByARedirectOpensItsOwnBreakerOnly() async throws {
        let clock = clock
        let origins = OriginGuards(baseURL: StageHarness.url) {
            OriginGuard(breaker: CircuitBreakerPolicy(minimumCalls: 2, openDuration: .seconds(60)), budget: nil, hedging: nil, now: clock.now)
        }
        let failing = failing
        let next = StubNext { _, request, _ in
            if request.url.host == "failing.example.com" { return StageHarness.reply(503) }
            if request.url.path.hasSuffix("/elsewhere") { return StageHarness.reply(302, headers: ["Location": failing.absoluteString]) }
            return StageHarness.reply(200)
        }
        let pipeline = stages(origins, next)
        let elsewhere = StageHarness.url.appendingPathComponent("elsewhere")
        for _ in 0..<2 {
            let response = try await pipeline.send(StageHarness.request(url: elsewhere), StageHarness.call(clock: clock, origin: origins.base))
            #expect(response.statusCode == 503)
        }
        let refused = await #expect(throws: HTTPClientError.self) {
            try await pipeline.send(StageHarness.request(url: elsewhere), StageHarness.call(clock: clock, origin: origins.base))
        }
        #expect(refused?.code == .circuitOpen, "the failing origin's breaker refuses the hop")
        #expect(origins.guardian(for: failing).breakerPhase.map { if case .open = $0 { true } else { false } } == true)
        #expect(origins.base.breakerPhase.map { if case .closed = $0 { true } else { false } } == true)
        // The client's own origin still answers.
        #expect(try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, origin: origins.base)).statusCode == 200)
    }

    @Test func anOpenBreakerRefusesWithoutSending() async throws {
        let clock = clock
        let origins = OriginGuards(baseURL: StageHarness.url) {
            OriginGuard(breaker: CircuitBreakerPolicy(minimumCalls: 2, openDuration: .seconds(60)), budget: nil, hedging: nil, now: clock.now)
        }
        let next = StubNext { _, _, _ in StageHarness.reply(503) }
        let pipeline = stages(origins, next)
        for _ in 0..<2 { _ = try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, origin: origins.base)) }
        let error = await #expect(throws: HTTPClientError.self) {
            try await pipeline.send(StageHarness.request(), StageHarness.call(clock: clock, origin: origins.base))
        }
        #expect(error?.code == .circuitOpen)
        #expect(error?.retryAfter == .seconds(60))
        #expect(next.arrivals == 2)
    }
}
