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

    /// Cancelling the call's task alone (its first attempt lost to a hedge) ends the work
    /// that task waits on, and the call ends with what that task returns: neither the
    /// call nor its caller counts as cancelled.
    @Test(.timeLimit(.minutes(1))) func cancellingTheCallTaskAloneLeavesTheCallUncancelled() async throws {
        let callTask = CallTask()
        let started = Latch()
        async let outcome = Result(awaiting: {
            try await callTask.run {
                started.open()
                await waitUntilCancelled()
                return HTTPResponse(statusCode: 200, body: Data("after the hedge won".utf8))
            }
        })
        await started.wait()
        callTask.cancelCallTask()
        let response = try await outcome.get()
        #expect(String(decoding: response.body, as: UTF8.self) == "after the hedge won")
        #expect(!callTask.isCancelled)
        #expect(!Task.isCancelled)
    }

    /// The caller's own cancellation reaches the call's task and every hedge it started,
    /// and a hedge handed over afterwards starts cancelled; the call ends only once they
    /// all have.
    @Test(.timeLimit(.minutes(1))) func theCallersCancellationReachesTheCallAndItsHedges() async throws {
        let callTask = CallTask()
        let started = Latch()
        let hedgeCancelled = Latch()
        let lateHedgeCancelled = Latch()
        let caller = Task {
            try await callTask.run {
                handOverHedge(to: callTask, started: started, cancelled: hedgeCancelled)
                await waitUntilCancelled()
                handOverHedge(to: callTask, cancelled: lateHedgeCancelled)
                throw HTTPClientError.cancelled()
            }
        }
        #expect(await cancel(caller, once: started) == .cancelled)
        #expect(hedgeCancelled.isOpen)
        #expect(lateHedgeCancelled.isOpen)
        #expect(callTask.isCancelled)
    }

    /// A hedge handed over after the caller was cancelled, while no hedge ran, starts
    /// cancelled: the call ends without waiting for it to reach its deadline.
    @Test(.timeLimit(.minutes(1))) func aHedgeHandedOverAfterTheCallersCancellationStartsCancelled() async throws {
        let callTask = CallTask()
        let started = Latch()
        let hedgeCancelled = Latch()
        let caller = Task {
            try await callTask.run {
                started.open()
                await waitUntilCancelled()
                handOverHedge(to: callTask, cancelled: hedgeCancelled)
                throw HTTPClientError.cancelled()
            }
        }
        #expect(await cancel(caller, once: started) == .cancelled)
        #expect(hedgeCancelled.isOpen)
    }

    /// The caller's cancellation is passed on once: while the call's task and its hedge
    /// wind down, however long that takes, the caller's task waits parked, not turning.
    @Test(.timeLimit(.minutes(1))) func aCancelledCallerWaitsParkedWhileTheCallWindsDown() async throws {
        let callTask = CallTask()
        let hedgeStarted = Latch()
        let windDown = Latch()
        let caller = Task {
            try await callTask.run {
                handOverHedge(to: callTask, started: hedgeStarted)
                await windDown.wait()  // ignores cancellation
                throw HTTPClientError.cancelled()
            }
        }
        await hedgeStarted.wait()
        await until { callTask.hasParkedHost }
        caller.cancel()  // runs the caller's cancellation handlers before it returns
        #expect(callTask.isCancelled)
        await until { callTask.hasParkedHost }
        windDown.open()
        let error = await caller.result.error as? HTTPClientError
        #expect(error?.code == .cancelled)
    }

    private func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    /// Cancels `caller` once `started` opened; the code of the error its call ended with.
    private func cancel(_ caller: Task<HTTPResponse, any Error>, once started: Latch) async -> HTTPClientError.Code? {
        await started.wait()
        caller.cancel()
        return (await caller.result.error as? HTTPClientError)?.code
    }

    /// Hands `callTask` a hedge that opens `started`, waits until it is cancelled, then
    /// opens `cancelled`.
    private func handOverHedge(to callTask: CallTask, started: Latch = Latch(), cancelled: Latch = Latch()) {
        callTask.startHedge {
            Task.immediate {
                started.open()
                await waitUntilCancelled()
                cancelled.open()
            }
        }
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
