import Foundation
import MomentsHTTP
import MomentsNetworking
import MomentsTesting
import Testing

/// What the client makes of each fault `FaultInjectingTransport` (the `MomentsTesting`
/// kit) injects: a request the server never read may be sent again; one it read and
/// answered into a lost connection is never sent again unless repeatable; a stalled
/// call ends at its deadline on the injected clock; a cut answer is a transport failure.
@Suite struct InjectedFaultTests {
    /// A POST with the client's deadline (`CreateUser` sets 2 s of its own, which a busy
    /// machine may spend before the first attempt).
    private struct PostUser: Request {
        typealias Response = User
        var path: String { "/users" }
        var method: HTTPMethod { .post }
        var body: RequestBody? { .json(User(id: 1, name: "Ada")) }
    }

    private static let user = #"{"id":1,"name":"Ada"}"#

    /// A server behind the faults, counting what it received.
    private static func server() -> StubTransport {
        StubTransport { _ in HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(user.utf8)) }
    }

    private static func client(_ transport: FaultInjectingTransport, clock: ManualClock? = nil) -> HTTPClient {
        testClient(transport) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), jitter: 0)
            $0.hedging = nil
            if let clock { $0.clock = clock }
        }
    }

    @Test func aQueryResetBeforeTheServerReadItIsSentAgainAndAnswered() async throws {
        let server = Self.server()
        let transport = FaultInjectingTransport(wrapping: server)
        transport.inject(.resetBeforeRead)
        let user = try await Self.client(transport).send(GetUser(id: "1"))
        #expect(user.name == "Ada")
        #expect(transport.deliveries.map(\.reachedServer) == [false, true])
        #expect(server.requests.count == 1)
    }

    @Test func aPostWhoseAnswerIsLostAfterTheServerReadItIsNeverSentAgain() async throws {
        let server = Self.server()
        let transport = FaultInjectingTransport(wrapping: server)
        transport.inject(.resetAfterRead, when: { $0.method == .post })
        let error = await #expect(throws: HTTPClientError.self) { try await Self.client(transport).send(PostUser()) }
        #expect(error?.code == .transportFailure)
        #expect(error?.transportFailure?.mayHaveReachedServer == true)
        #expect(server.requests.count == 1, "the server applied it once")
        #expect(transport.deliveries.count == 1, "and it was not sent again")
    }

    @Test func aRefusedConnectionIsKnownNotToHaveReachedTheServer() async throws {
        let transport = FaultInjectingTransport(wrapping: Self.server())
        transport.inject(.refuse, times: nil)
        let error = await #expect(throws: HTTPClientError.self) { try await Self.client(transport).send(PostUser()) }
        #expect(error?.transportFailure?.kind == .connectionRefused)
        #expect(error?.transportFailure?.mayHaveReachedServer == false)
        #expect(transport.requestsThatReachedServer == 0)
    }

    @Test func aStalledCallEndsAtItsDeadlineOnTheInjectedClock() async throws {
        let clock = ManualClock()
        let transport = FaultInjectingTransport(wrapping: Self.server(), clock: clock)
        transport.inject(.stall)
        let client = testClient(transport) {
            $0.clock = clock
            $0.timeout = .seconds(5)
            $0.hedging = nil
        }
        let call = Task { try await client.send(GetUser(id: "1")) }
        await transport.waitForRequests(1)
        await clock.waitForWakeUps(1)
        clock.advance(by: .seconds(5))
        let error = await #expect(throws: HTTPClientError.self) { try await call.value }
        #expect(error?.transportFailure?.kind == .timedOut, "\(String(describing: error))")
    }

    @Test func latencyEndsWhenTheClockSaysAndTheServerAnsweredFirst() async throws {
        let clock = ManualClock()
        let server = Self.server()
        let transport = FaultInjectingTransport(wrapping: server, clock: clock)
        transport.inject(.latency(.seconds(2)))
        let client = testClient(transport) { $0.timeout = .seconds(60); $0.hedging = nil }
        async let call = client.send(GetUser(id: "1"))
        await clock.waitForWakeUps(1)
        #expect(server.requests.count == 1, "the server computed the answer before the delay")
        clock.advance(by: .seconds(2))
        #expect(try await call.name == "Ada")
    }

    @Test func statusesAndCutAnswersAreTheClientsTypedErrorsAndRulesRunOutInOrder() async throws {
        let transport = FaultInjectingTransport(wrapping: Self.server())
        transport.inject(.status(404, body: Data(#"{"error":"gone"}"#.utf8)))
        transport.inject(.truncate(keepingBytes: 3))
        let client = testClient(transport) { $0.hedging = nil }
        let missing = await #expect(throws: HTTPClientError.self) { try await client.send(GetUser(id: "1")) }
        #expect(missing?.code == .serverError && missing?.response?.statusCode == 404)
        let cut = await #expect(throws: HTTPClientError.self) { try await client.send(GetUser(id: "1")) }
        #expect(cut?.transportFailure?.kind == .truncatedResponse)
        #expect(try await client.send(GetUser(id: "1")).name == "Ada", "both rules are used up")
        #expect(transport.deliveries.map { $0.fault?.description } == ["status 404", "truncate to 3 bytes", nil])
    }
}
