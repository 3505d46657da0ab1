import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsTesting
import MomentsGraphQL
import MomentsHTTP

/// What a client does for a fleet against a failing server: one deadline per call, a
/// retry budget, a circuit breaker, hedged reads and load shedding, through a scripted
/// transport.
@Suite struct ClientResilienceTests {
    /// Each attempt goes with what is left of the call's deadline, and a retry whose
    /// backoff would pass it is not made: the failure at hand is returned, saying so.
    /// Time moves only when the test moves it.
    @Test func oneDeadlineCoversEveryAttemptAndBackoff() async throws {
        let clock = ManualClock()
        let transport = ScriptedTransport { _, _ in status(503) }
        let client = testClient(transport) {
            $0.clock = clock
            $0.timeout = .milliseconds(600)
            $0.retryPolicy = RetryPolicy(maximumAttempts: 10, initialDelay: .milliseconds(200), jitter: 0)
            $0.circuitBreaker = nil
            $0.deadlineHeader = "X-Deadline-Ms"
        }
        async let outcome = Result(awaiting: { try await client.send(Endpoint<User>(.get, "/u")) })
        await clock.waitForWakeUps(1)  // the first backoff, 200 ms
        clock.advance(by: .milliseconds(200))
        let error = await outcome.error as? HTTPClientError
        #expect(error?.statusCode == 503, "\(String(describing: error))")
        #expect(error?.retriesStopped == .deadline, "\(String(describing: error))")
        // Attempts at 0 and 200 ms; the next backoff (400 ms) would end at the deadline.
        #expect(transport.calls == 2)
        #expect(transport.requests.map(\.timeout) == [.milliseconds(600), .milliseconds(400)])
        #expect(transport.requests.map { $0.headers["X-Deadline-Ms"] } == ["600", "400"])
    }

    @Test func anAttemptTimeoutCapsEachAttemptWithinTheCall() async throws {
        let transport = ScriptedTransport { call, _ in
            if call == 1 { throw HTTPClientError.transportFailure(TransportFailure(kind: .timedOut, message: "slow")) }
            return ok()
        }
        let client = testClient(transport) {
            $0.clock = ManualClock()
            $0.timeout = .seconds(300)
            $0.attemptTimeout = .seconds(1)
            $0.retryPolicy = RetryPolicy(sleep: { _ in })
        }
        _ = try await client.send(Endpoint<User>(.get, "/u"))
        #expect(transport.requests.map(\.timeout) == [.seconds(1), .seconds(1)])
        #expect(transport.calls == 2)
    }

    /// 64 callers, a server failing every request: retries add no more than the budget
    /// (10% of the calls, its starting balance and its floor).
    @Test func theRetryBudgetCapsWhatRetriesAddDuringAnOutage() async throws {
        let transport = ScriptedTransport { _, _ in status(503) }
        let client = testClient(transport) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3, sleep: { _ in })
            $0.circuitBreaker = nil
        }
        let calls = 640
        let stops = PThreadMutex<[RetryStop?]>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<64 {
                group.addTask {
                    for _ in 0..<(calls / 64) {
                        do {
                            _ = try await client.send(Endpoint<User>(.get, "/u/\(worker)"))
                        } catch let error as HTTPClientError {
                            stops.withLock { $0.append(error.retriesStopped) }
                        } catch {}
                    }
                }
            }
        }
        let budget = RetryBudget()
        let allowed = Double(calls) * (1 + budget.ratio) + budget.maximumBalance + 2 * max(1, budget.minimumPerSecond) * 10
        #expect(Double(transport.calls) <= allowed, "\(transport.calls) requests for \(calls) calls")
        #expect(stops.withLock { $0 }.contains(.budgetExhausted))
        #expect(stops.withLock { $0 }.count == calls)
    }

    /// A failing server opens the breaker: calls then fail at once without a request,
    /// saying when the client tries again.
    @Test func theBreakerFailsFastWhileOpen() async throws {
        let transport = ScriptedTransport { _, _ in status(503) }
        let client = testClient(transport) {
            $0.clock = ManualClock()  // the breaker's window and open time stand still
            $0.circuitBreaker = CircuitBreakerPolicy(minimumCalls: 4, openDuration: .seconds(60))
        }
        for _ in 0..<4 { _ = try? await client.send(Endpoint<User>(.get, "/u")) }
        #expect(transport.calls == 4)
        for _ in 0..<10 {
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u")) }
            #expect(error?.code == .circuitOpen)
            #expect(error?.retryAfter == .seconds(60))
        }
        #expect(transport.calls == 4, "an open breaker sends nothing")
    }

    /// After the open time a probe goes through; the server is back, so it closes the
    /// breaker, and calls succeed again.
    @Test func theBreakerProbesItsWayBack() async throws {
        let serverUp = PThreadMutex(false)
        let transport = ScriptedTransport { _, _ in serverUp.withLock { $0 } ? ok() : status(503) }
        let client = testClient(transport) {
            $0.circuitBreaker = CircuitBreakerPolicy(minimumCalls: 4, openDuration: .milliseconds(50))
        }
        for _ in 0..<4 { _ = try? await client.send(Endpoint<User>(.get, "/u")) }
        serverUp.withLock { $0 = true }
        #expect(await eventually { (try? await client.send(Endpoint<User>(.get, "/u"))) != nil }, "a probe closes the breaker")
        for _ in 0..<3 { _ = try await client.send(Endpoint<User>(.get, "/u")) }
    }

    @Test func answersTheCallerCausedNeverOpenTheBreaker() async throws {
        let transport = ScriptedTransport { _, _ in status(404) }
        let client = testClient(transport) {
            $0.circuitBreaker = CircuitBreakerPolicy(minimumCalls: 2)
        }
        for _ in 0..<20 {
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/u")) }
            #expect(error?.statusCode == 404)
        }
        #expect(transport.calls == 20)
    }

    /// A read whose first attempt stalls is sent again after the hedging delay; the
    /// hedge's answer wins and the stalled attempt is cancelled. A mutation is never
    /// hedged.
    @Test func aStalledReadIsHedgedAndAMutationNever() async throws {
        let cancelled = PThreadMutex(0)
        let transport = ScriptedTransport { call, _ in
            if call == 1 {
                await waitUntilCancelled()
                cancelled.withLock { $0 += 1 }
                throw HTTPClientError.cancelled()
            }
            return ok(#"{"data":{"user":{"id":1,"name":"Ada"}}}"#)
        }
        let client = testClient(transport) {
            $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(20)))
            $0.coalescesRequests = false
        }
        var query = HedgedQuery()
        #expect(try await client.send(query).name == "Ada")
        #expect(transport.calls == 2)
        // The stalled attempt has been cancelled and has ended by the time the call returns.
        #expect(cancelled.withLock { $0 } == 1, "the stalled attempt is cancelled before the call returns")

        let mutations = ScriptedTransport(delay: .milliseconds(100)) { _, _ in ok(#"{"data":{"rename":{"id":1,"name":"Bo"}}}"#) }
        let mutating = testClient(mutations) { $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(5))) }
        _ = try await mutating.send(HedgedMutation())
        #expect(mutations.calls == 1, "a mutation is never sent twice")
        query.hedges = false
        let plain = ScriptedTransport(delay: .milliseconds(100)) { _, _ in ok(#"{"data":{"user":{"id":1,"name":"Ada"}}}"#) }
        _ = try await testClient(plain) { $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(5))) }.send(query)
        #expect(plain.calls == 1, "a request that does not hedge is sent once")
    }

    /// An answer the client would retry does not win a hedged race: the first attempt's
    /// 408 (retried by the default policy, not a breaker failure) waits for the hedge,
    /// whose 200 is the call's answer. Time moves only when the test moves it.
    @Test func anAnswerTheClientWouldRetryDoesNotWinAHedgedRace() async throws {
        let clock = ManualClock()
        let hedgeGate = Latch()
        let transport = ScriptedTransport { call, _ in
            if call == 1 {
                try await clock.sleep(for: .seconds(1))
                return status(408)
            }
            await hedgeGate.wait()
            return ok(#"{"data":{"user":{"id":1,"name":"Ada"}}}"#)
        }
        let client = testClient(transport) {
            $0.clock = clock
            $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(20)))
            // 408 is retryable, but no retry is made: the answer the race picks is the call's.
            $0.retryPolicy = RetryPolicy(maximumAttempts: 1)
            $0.coalescesRequests = false
        }
        async let answer = client.send(HedgedQuery())
        await transport.waitForCalls(1)
        await clock.waitForWakeUps(2)  // the first attempt's answer, and the hedging delay
        clock.advance(by: .milliseconds(20))
        await transport.waitForCalls(2)  // the hedge, held at its gate
        clock.advance(by: .seconds(1))  // the first attempt answers 408
        hedgeGate.open()
        #expect(try await answer.name == "Ada")
        #expect(transport.calls == 2)
    }

    /// Reads stalled while their origin is busy are not hedged: with 8 in flight, more
    /// than ``HedgingPolicy/maximumAttemptsInFlight`` (6 by default), the hedging delay
    /// ends and no second copy goes; without the limit, each is sent twice. Time moves
    /// only when the test moves it.
    @Test(arguments: [HedgingPolicy().maximumAttemptsInFlight, nil])
    func readsStalledWhileTheOriginIsBusyAreNotHedged(limit: Int?) async throws {
        let clock = ManualClock()
        let released = Latch()
        let transport = ScriptedTransport { call, _ in
            if call <= 8 { await released.wait() }
            return ok(#"{"data":{"user":{"id":1,"name":"Ada"}}}"#)
        }
        let client = testClient(transport) {
            $0.clock = clock
            $0.hedging = HedgingPolicy(delay: .fixed(.milliseconds(20)), maximumAttemptsInFlight: limit)
            $0.retryBudget = nil
            $0.coalescesRequests = false
        }
        try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 { group.addTask { try await client.send(HedgedQuery()).name } }
            await transport.waitForCalls(8)
            await clock.waitForWakeUps(8)  // each call's hedging delay
            // Each hedge is decided when its delay ends, on the thread that advances the
            // clock: before the gate opens. A hedge that goes reaches the transport before
            // the gate opens too (once its call's first attempt has answered, a hedge not
            // yet started is not sent).
            clock.advance(by: .milliseconds(20))
            if limit == nil { await transport.waitForCalls(16) }
            released.open()
            for try await name in group { #expect(name == "Ada") }
        }
        #expect(transport.calls == (limit == nil ? 16 : 8))
    }

    /// Beyond the concurrency limit and its queue, a request fails at once with
    /// `overloaded` instead of waiting.
    @Test func requestsBeyondTheQueueAreShedAtOnce() async throws {
        let gate = PThreadMutex<[CheckedContinuation<Void, Never>]>([])
        let transport = ScriptedTransport { _, _ in
            await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } }
            return ok()
        }
        let client = testClient(transport) {
            $0.maximumConcurrentRequests = 1
            $0.maximumQueuedRequests = 1
            $0.coalescesRequests = false
        }
        let first = Task { try await client.send(Endpoint<User>(.get, "/a")) }
        await transport.waitForCalls(1)
        let second = Task { try await client.send(Endpoint<User>(.get, "/b")) }
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 2) })
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/c")) }
        #expect(error?.code == .overloaded)
        while transport.calls < 2 || !gate.withLock({ $0.isEmpty }) {
            for continuation in gate.withLock({ state in defer { state = [] }; return state }) { continuation.resume() }
            await Task.yield()
        }
        _ = try await first.value
        _ = try await second.value
    }
}

private struct HedgedQuery: GraphQLOperation {
    typealias Response = User
    struct Variables: Encodable, Sendable { var id = "1" }
    struct ResponseData: Decodable, Sendable { var user: User }
    static let document = "query user($id: ID!) { user(id: $id) { id name } }"
    static let operationName = "user"
    var variables = Variables()
    var hedges = true
    var options: RequestOptions { RequestOptions(allowsRetry: true, hedges: hedges, isCacheable: true) }
    func extract(_ data: ResponseData) -> User { data.user }
}

private struct HedgedMutation: GraphQLOperation {
    typealias Response = User
    struct Variables: Encodable, Sendable { var id = "1" }
    struct ResponseData: Decodable, Sendable { var rename: User }
    static let document = "mutation rename($id: ID!) { rename(id: $id) { id name } }"
    static let operationName = "rename"
    static let isMutation = true
    var variables = Variables()
    var options: RequestOptions { RequestOptions(allowsRetry: false, hedges: true, isCacheable: false) }
    func extract(_ data: ResponseData) -> User { data.rename }
}
