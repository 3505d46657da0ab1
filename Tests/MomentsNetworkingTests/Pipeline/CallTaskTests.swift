import Foundation
@testable import MomentsNetworking
import MomentsSupport
import MomentsTesting
import MomentsTestSupport
import Testing
import MomentsHTTP

/// ``CallTask``: the task a call's stages run in can be cancelled without cancelling
/// the caller, and each run of a call ends with its own outcome.
@Suite struct CallTaskTests {
    private let clock = ManualClock()

    /// Cancelling the call ends the work its task waits on with a cancellation; the
    /// caller's own task is not cancelled. A cancellation made before the call runs holds.
    @Test(arguments: [false, true])
    func cancellingACallCancelsItsTaskAndNotItsCaller(beforeItRuns: Bool) async throws {
        let callTask = CallTask()
        let started = Latch()
        if beforeItRuns { callTask.cancel() }
        async let outcome = Result(awaiting: {
            try await callTask.run {
                started.open()
                await waitUntilCancelled()
                throw HTTPClientError.cancelled()
            }
        })
        await started.wait()
        if !beforeItRuns { callTask.cancel() }
        let error = await outcome.error as? HTTPClientError
        #expect(error?.code == .cancelled)
        #expect(!Task.isCancelled)
    }

    /// A call sent again gets its second answer, even when that one has to wait.
    @Test func aCallSentAgainGetsItsOwnAnswer() async throws {
        let clock = clock
        let next = StubNext { arrival, _, _ in
            if arrival == 2 { try await clock.sleep(for: .seconds(1)) }
            return HTTPResponse(statusCode: 200, body: Data("attempt \(arrival)".utf8))
        }
        let pipeline = CallPipeline([next])
        let call = StageHarness.call(clock: clock)
        #expect(String(decoding: try await pipeline.send(StageHarness.request(), call).body, as: UTF8.self) == "attempt 1")
        async let second = pipeline.send(StageHarness.request(), call)
        await clock.waitForWakeUps(1)
        clock.advance(by: .seconds(1))
        #expect(String(decoding: try await second.body, as: UTF8.self) == "attempt 2")
    }
}
