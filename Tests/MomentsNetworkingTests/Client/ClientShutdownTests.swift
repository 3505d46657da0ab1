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

    /// A transport that answers after a yield, and counts the requests that reached it
    /// after its shutdown began.
    final class ShutdownWatchingTransport: HTTPTransport {
        private struct State {
            var isShutDown = false
            var sent = 0
            var sentAfterShutdown = 0
        }
        private let state = PThreadMutex(State())
        var sent: Int { state.withLock { $0.sent } }
        var sentAfterShutdown: Int { state.withLock { $0.sentAfterShutdown } }

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            state.withLock { state in
                state.sent += 1
                if state.isShutDown { state.sentAfterShutdown += 1 }
            }
            await Task.yield()
            return ok()
        }

        func shutdown() async { state.withLock { $0.isShutDown = true } }
    }

    /// Calls that start while a shutdown begins, in seeded orders: each is either refused
    /// with `.shutDown`, or counted in flight and answered before the transport shuts
    /// down (the grace period, on a clock that never moves, outlasts them); none reaches
    /// the transport after its shutdown.
    @Test func callsRacingAShutdownAreRefusedOrAnsweredBeforeTheTransportShutsDown() async throws {
        var (answeredInAll, refusedInAll) = (0, 0)
        for seed in UInt64(1)...300 {
            var generator = SeededGenerator(seed: seed)
            let transport = ShutdownWatchingTransport()
            let client = HTTPClient.patient(baseURL: URL(string: "http://bff.test")!, transport: transport) {
                $0.clock = ManualClock()
                $0.retryPolicy = nil
                $0.hedging = nil
                // Each call its own exchange, so the transport counts every call sent.
                $0.coalescesRequests = false
            }
            let delays = (0..<6).map { _ in Int.random(in: 0..<6, using: &generator) }
            let shutdownDelay = Int.random(in: 0..<6, using: &generator)
            let outcomes = await withTaskGroup(of: Result<String, any Error>.self) { group in
                for delay in delays {
                    group.addTask {
                        for _ in 0..<delay { await Task.yield() }
                        do { return .success(try await client.send(GetUser(id: "1")).name) } catch { return .failure(error) }
                    }
                }
                for _ in 0..<shutdownDelay { await Task.yield() }
                await client.shutdown(gracePeriod: .seconds(3600))
                return await group.reduce(into: []) { $0.append($1) }
            }
            #expect(transport.sentAfterShutdown == 0, "seed \(seed): a request reached the transport after its shutdown")
            let answered = outcomes.filter { (try? $0.get()) == "Ada" }.count
            let refused = outcomes.filter { if case .failure(let error) = $0 { (error as? HTTPClientError)?.code == .shutDown } else { false } }.count
            #expect(answered + refused == delays.count, "seed \(seed): \(outcomes)")
            #expect(transport.sent == answered, "seed \(seed): a refused call sent nothing")
            answeredInAll += answered
            refusedInAll += refused
        }
        // The orders explored put calls on both sides of the shutdown's start.
        #expect(answeredInAll > 0 && refusedInAll > 0, "answered \(answeredInAll), refused \(refusedInAll)")
    }
}
