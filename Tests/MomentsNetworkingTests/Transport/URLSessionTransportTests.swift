import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// `URLSessionTransport` against a real HTTP server on 127.0.0.1.
@Suite(.serialized) struct URLSessionTransportTests {
    let server: ScriptServer
    let transport = URLSessionTransport()

    init() async throws {
        server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
    }

    func client(_ configure: @Sendable (inout HTTPClient.Configuration) -> Void = { _ in }) -> HTTPClient {
        HTTPClient.patient(baseURL: server.baseURL, transport: transport, configure: configure)
    }

    @Test func sendsMethodPathQueryHeadersAndBody() async throws {
        defer { server.stop() }
        let echo = try await client().send(
            Endpoint<Echo>(.post, "/echo/\(segment: "a b/c")")
                .query("q", "1+1")
                .header("X-Trace", "t-42")
                .body(["hello": "wörld"])
        )

        #expect(echo.method == "POST")
        #expect(echo.rawPath == "/echo/a%20b%2Fc")
        #expect(echo.rawQuery == "q=1%2B1")
        #expect(echo.headers["x-trace"] == "t-42")
        #expect(echo.headers["content-type"] == "application/json")
        #expect(echo.body == #"{"hello":"wörld"}"#)
    }

    @Test func aFailureStatusIsAnAnswerWithItsHeadersAndBody() async throws {
        defer { server.stop() }
        let error = await #expect(throws: HTTPClientError.self) {
            try await client().send(Endpoint<Data>(.get, "/status/503").query("retryAfter", "7"))
        }

        #expect(error?.code == .serverError)
        #expect(error?.statusCode == 503)
        #expect(error?.response?.headers["retry-after"] == "7")
        #expect(try error?.decodeBody(as: [String: String].self) == ["error": "status 503"])
    }

    @Test func cancellingASlowRequestEndsItPromptly() async throws {
        defer { server.stop() }
        let client = client()
        let task = Task { try await client.send(Endpoint<Data>(.get, "/slow").query("seconds", "60")) }
        // Cancelled once the server holds the request: it answers when the request arrives.
        let arrived = try await self.client().send(Endpoint<Data>(.get, "/slow-started").query("atLeast", "1"))
        #expect(arrived == Data("1".utf8))
        task.cancel()
        let result = await task.result

        // Not cancelled, it would end after the client's deadline as `timedOut`, or answered.
        #expect((result.error as? HTTPClientError)?.code == .cancelled)
    }

    @Test func aFractionalDeadlineIsHonoured() async throws {
        defer { server.stop() }
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) {
            try await client { $0.timeout = .milliseconds(400) }
                .send(Endpoint<Data>(.get, "/slow").query("seconds", "30"))
        }
        let elapsed = ContinuousClock.now - started

        #expect(error?.code == .transportFailure)
        #expect(error?.transportFailure?.kind == .timedOut)
        #expect(elapsed >= .milliseconds(390))
        #expect(elapsed < .seconds(10), "the 30 s answer was abandoned at the 0.4 s deadline")
    }

    @Test func aRefusedConnectionIsATransportFailure() async throws {
        defer { server.stop() }
        let refused = HTTPClient.patient(baseURL: URL(string: "http://127.0.0.1:\(refusedLoopbackPort())")!, transport: transport)

        let error = await #expect(throws: HTTPClientError.self) { try await refused.send(Endpoint<Data>(.get, "/json")) }

        #expect(error?.code == .transportFailure)
        #expect(error?.transportFailure?.kind == .connectionRefused)
    }

    @Test func aResetOrTruncatedAnswerIsATransportFailure() async throws {
        defer { server.stop() }
        let client = client()
        let reset = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/reset")) }
        let truncated = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/truncated")) }

        #expect(reset?.code == .transportFailure)
        #expect([.connectionReset, .badResponse].contains(reset?.transportFailure?.kind))
        #expect(truncated?.code == .transportFailure)
        #expect(truncated?.transportFailure?.kind == .truncatedResponse)
        #expect(truncated?.description.contains("10 of 1000 bytes") == true)
    }

    @Test func bodiesOverTheLimitAreRefusedWithOrWithoutContentLength() async throws {
        defer { server.stop() }
        let client = client { $0.maximumResponseSize = 64 * 1024 }

        let announced = await #expect(throws: HTTPClientError.self) {
            try await client.send(Endpoint<Data>(.get, "/bytes").query("count", "1000000"))
        }
        let streamed = await #expect(throws: HTTPClientError.self) {
            try await client.send(Endpoint<Data>(.get, "/stream").query("count", "10000000"))
        }
        let fits = try await client.send(Endpoint<Data>(.get, "/bytes").query("count", "65536"))

        #expect(announced?.code == .responseTooLarge)
        #expect(streamed?.code == .responseTooLarge)
        #expect(fits.count == 65536)
    }

    @Test func aHeadAnswerHasNoBodyAndIsNotTruncated() async throws {
        defer { server.stop() }
        let response = try await client().response(for: Endpoint<Data>(.head, "/bytes").query("count", "500"))

        #expect(response.statusCode == 200)
        #expect(response.headers["content-length"] == "500")
        #expect(response.value.isEmpty)
    }

    @Test func manyConcurrentRequestsAllSucceed() async throws {
        defer { server.stop() }
        let client = client()
        let names = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<64 {
                group.addTask { try await client.send(Endpoint<User>(.get, "/json")).name }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(names == Array(repeating: "Ada", count: 64))
    }

    @Test func cancellationRacingCompletionNeverHangs() async throws {
        defer { server.stop() }
        let client = client { $0.timeout = .seconds(5) }
        // The cancellations land from before the request leaves to after its answer: the
        // delays span twice a round trip as this machine takes it now (a fixed range was
        // all "before" on a loaded machine, where a round trip took longer than it).
        var roundTrips: [Duration] = []
        for _ in 0..<5 {
            let started = ContinuousClock.now
            _ = try await client.send(Endpoint<Data>(.get, "/json"))
            roundTrips.append(ContinuousClock.now - started)
        }
        let roundTrip = roundTrips.sorted()[2]
        var outcomes = (values: 0, cancelled: 0)
        for round in 0..<2_000 {
            let task = Task { try await client.send(Endpoint<Data>(.get, "/json")) }
            if round % 4 != 0 { try await Task.sleep(for: roundTrip * (round % 7) / 3) }
            task.cancel()
            switch await task.result {
            case .success(let body):
                #expect(try JSONDecoder().decode(User.self, from: body) == User(id: 1, name: "Ada"), "round \(round): a partial answer")
                outcomes.values += 1
            case .failure(let error):
                #expect((error as? HTTPClientError)?.code == .cancelled)
                outcomes.cancelled += 1
            }
        }
        #expect(outcomes.cancelled > 0)
        #expect(outcomes.values > 0, "the race was explored from both sides")
        // Nothing is left behind: no exchange and no deadline of the cancelled calls.
        let transport = self.transport
        #expect(await eventually { transport.requestsInFlight == 0 && transport.pendingDeadlines == 0 })
        // The transport still works after the storm.
        #expect(try await client.send(Endpoint<User>(.get, "/json")).name == "Ada")
    }
}

/// Form bodies as a real server receives them.
@Suite struct FormBodyTests {
    @Test func aFormBodyIsPercentEncodedWithItsContentType() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.baseURL)

        let echo = try await client.send(Endpoint<Echo>(.post, "/echo").body(.formURLEncoded([
            (name: "user name", value: "Ada Lovelace"), (name: "q", value: "a&b=c+d/é"), (name: "empty", value: ""),
        ])))

        #expect(echo.headers["content-type"] == "application/x-www-form-urlencoded")
        #expect(echo.body == "user+name=Ada+Lovelace&q=a%26b%3Dc%2Bd%2F%C3%A9&empty=")
    }
}
