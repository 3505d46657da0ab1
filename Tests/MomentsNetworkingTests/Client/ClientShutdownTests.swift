import Foundation
import MomentsHTTP
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import MomentsTesting
import Testing

/// `HTTPClient.shutdown(gracePeriod:)`: new calls refused with a typed error and nothing
/// sent, calls in flight let finish within the grace period and cancelled after it, then
/// the transport shut down, once, whoever else asks.
@Suite struct ClientShutdownTests {
    /// A transport that holds each request until `release()` (or its cancellation), and
    /// counts its shutdowns.
    final class GatedTransport: HTTPTransport {
        private struct State {
            var gate: [CheckedContinuation<Void, Never>] = []
            var shutdowns = 0
        }
        private let state = PThreadMutex(State())
        let scripted: ScriptedTransport

        init() {
            let holder = PThreadMutex<GatedTransport?>(nil)
            scripted = ScriptedTransport { _, _ in
                await holder.withLock { $0 }?.hold()
                try Task.checkCancellation()
                return ok()
            }
            holder.withLock { $0 = self }
        }

        func hold() async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in state.withLock { $0.gate.append(continuation) } }
            } onCancel: {
                release()
            }
        }

        func release() {
            let waiting = state.withLock { state in
                defer { state.gate = [] }
                return state.gate
            }
            for continuation in waiting { continuation.resume() }
        }

        var shutdowns: Int { state.withLock { $0.shutdowns } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            do { return try await scripted.send(request) } catch is CancellationError { throw HTTPClientError.cancelled() }
        }

        func shutdown() async { state.withLock { $0.shutdowns += 1 } }
    }

    private func client(_ transport: GatedTransport, clock: ManualClock) -> HTTPClient {
        HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport) {
            $0.clock = clock
            $0.timeout = .seconds(3600)
            $0.retryPolicy = nil
            $0.hedging = nil
        }
    }

    @Test func aCallInFlightFinishesNewCallsAreRefusedAndTheTransportIsShutDownOnce() async throws {
        let clock = ManualClock()
        let transport = GatedTransport()
        let client = client(transport, clock: clock)
        let call = Task { try await client.send(GetUser(id: "1")) }
        await transport.scripted.waitForCalls(1)

        let armed = clock.pendingWakeUps
        let shutdowns = (0..<3).map { _ in Task { await client.shutdown(gracePeriod: .seconds(30)) } }
        // The first shutdown has begun once its grace period's wake-up is armed.
        await clock.waitForWakeUps(armed + 1)
        let refused = await #expect(throws: HTTPClientError.self) { try await client.send(GetUser(id: "2")) }
        #expect(refused?.code == .shutDown)
        #expect(transport.scripted.calls == 1, "a call refused after the shutdown began sends nothing")
        #expect(transport.shutdowns == 0, "the transport is shut down only once the calls have ended")

        transport.release()
        #expect(try await call.value.name == "Ada")
        for shutdown in shutdowns { await shutdown.value }
        #expect(transport.shutdowns == 1)
        #expect(client.requestsInFlight == 0)
    }

    @Test func aCallStillInFlightWhenTheGracePeriodEndsIsCancelled() async throws {
        let clock = ManualClock()
        let transport = GatedTransport()
        let client = client(transport, clock: clock)
        let call = Task { try await client.send(GetUser(id: "1")) }
        await transport.scripted.waitForCalls(1)
        let armed = clock.pendingWakeUps
        let shutdown = Task { await client.shutdown(gracePeriod: .seconds(5)) }
        // The grace period runs from the shutdown's start: wait until its wake-up is armed.
        await clock.waitForWakeUps(armed + 1)

        clock.advance(by: .seconds(4))
        #expect(transport.shutdowns == 0)
        clock.advance(by: .seconds(1))
        await shutdown.value
        let error = await #expect(throws: HTTPClientError.self) { try await call.value }
        #expect(error?.code == .cancelled)
        #expect(transport.shutdowns == 1)
    }
}
