import Foundation
@testable import MomentsNetworking
import MomentsSupport
import MomentsTesting
import Testing
import MomentsHTTP

/// A stage with nothing to do for a call is passed by (``CallStage/isNeeded(for:_:)``):
/// it never runs, and the stage after it gets the request and the call as they were.
/// What a passed stage would have done must not be lost: a credential is still noted,
/// a middleware still runs, a slot is still taken.
@Suite struct StagePassingTests {
    private let clock = ManualClock()
    private let names = IdentityHeaderNames(configured: ["X-Api-Key"], authenticationHeader: nil)

    /// A stage that counts its runs, needed only when it says so.
    private final class Counting: CallStage {
        let needed: Bool
        private let count = PThreadMutex(0)
        init(needed: Bool) { self.needed = needed }
        var runs: Int { count.withLock { $0 } }
        func isNeeded(for request: HTTPRequest, _ call: Call) -> Bool { needed }
        func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
            count.withLock { $0 += 1 }
            return try await next(request, call)
        }
    }

    private struct Stamp: HTTPMiddleware {
        func intercept(_ request: HTTPRequest, context: RequestContext, next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
            var request = request
            request.headers["X-Stamped"] = "yes"
            return try await next(request)
        }
    }

    @Test func aStageThatIsNotNeededNeverRunsAndTheNextGetsTheRequestAsItWas() async throws {
        let passed = Counting(needed: false)
        let running = Counting(needed: true)
        let next = StubNext { _, _, _ in StageHarness.reply(200) }
        var request = StageHarness.request()
        request.headers["X-Mark"] = "1"
        let call = StageHarness.call(clock: clock, deadline: .seconds(7))
        _ = try await CallPipeline([passed, running, passed, next]).send(request, call)
        #expect(passed.runs == 0)
        #expect(running.runs == 1)
        #expect(next.requests.first?.headers["X-Mark"] == "1")
        #expect(next.calls.first?.deadline == call.deadline)
    }

    @Test func aPipelineWhoseRemainingStagesAreAllPassedFailsAsInvalid() async {
        let error = await #expect(throws: HTTPClientError.self) {
            try await CallPipeline([Counting(needed: true), Counting(needed: false)]).send(StageHarness.request(), StageHarness.call(clock: clock))
        }
        #expect(error?.code == .invalidRequest)
    }

    @Test func theCoalescingStageIsPassedOnlyWhenItHasNothingToNoteOrShare() async throws {
        let stage = CoalescingStage(coalescer: SingleFlight(), identityNames: names, identityKey: [1])
        let plain = StageHarness.request()
        #expect(!stage.isNeeded(for: plain, StageHarness.call(clock: clock)))
        #expect(stage.isNeeded(for: plain, StageHarness.call(clock: clock, coalesces: true)))
        #expect(stage.isNeeded(for: plain, StageHarness.call(clock: clock, keepsIdentity: true)))
        for (name, value) in [("authorization", "Bearer t0ken-1"), ("Cookie", "session=c00kie-2"), ("X-Api-Key", "k3y-value-3")] {
            var request = plain
            request.headers[name] = value
            #expect(stage.isNeeded(for: request, StageHarness.call(clock: clock)), "\(name)")
        }

        // A call that neither shares nor caches still has its credential noted.
        var credentialed = plain
        credentialed.headers["X-Api-Key"] = "k3y-value-3"
        let call = StageHarness.call(clock: clock)
        _ = try await CallPipeline([stage, StubNext { _, _, _ in StageHarness.reply(200) }]).send(credentialed, call)
        #expect(call.record.secrets.redact("echo k3y-value-3") == "echo <redacted>")
    }

    @Test func theMiddlewareStageIsPassedOnlyWithoutAMiddleware() async throws {
        let bare = MiddlewareStage(configured: [], authentication: nil)
        #expect(!bare.isNeeded(for: StageHarness.request(), StageHarness.call(clock: clock)))
        #expect(MiddlewareStage(configured: [Stamp()], authentication: nil).isNeeded(for: StageHarness.request(), StageHarness.call(clock: clock)))
        let authenticated = MiddlewareStage(configured: [], authentication: AuthenticationMiddleware(provider: StaticTokenProvider("t")))
        #expect(authenticated.isNeeded(for: StageHarness.request(), StageHarness.call(clock: clock)))

        // The call's own middleware runs although the client has none.
        let now = clock.now
        let call = Call(
            context: RequestContext(requestName: "Thing", allowsRetry: true), started: now, deadline: now + .seconds(30),
            isRepeatable: true, hedges: false, coalesces: false, middlewares: [Stamp()],
            origin: StageHarness.origin(clock: clock), record: CallRecord(keepsIdentity: false)
        )
        #expect(bare.isNeeded(for: StageHarness.request(), call))
        let next = StubNext { _, _, _ in StageHarness.reply(200) }
        _ = try await CallPipeline([bare, next]).send(StageHarness.request(), call)
        #expect(next.requests.first?.headers["X-Stamped"] == "yes")
    }

    @Test func aFreeSlotIsTakenAtOnceAndACancelledTaskTakesNone() async throws {
        let limiter = ConcurrencyLimiter(limit: 2, clock: clock)
        #expect(try limiter.takeFreeSlot())
        #expect(try limiter.takeFreeSlot())
        #expect(try !limiter.takeFreeSlot(), "both slots are taken")
        limiter.release()
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return Result { try limiter.takeFreeSlot() }
        }
        guard case .failure(let error) = await cancelled.value else {
            Issue.record("a cancelled task took a slot")
            return
        }
        #expect((error as? HTTPClientError)?.code == .cancelled)
        #expect(try limiter.takeFreeSlot(), "the released slot is still free")
    }
}
