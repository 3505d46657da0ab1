import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsObservability

/// The contract of ``HTTPTransport`` (see its documentation), checked against every
/// transport the SDK ships, on a real loopback server that misbehaves on purpose.
@Suite struct TransportConformanceTests {
    @Test(arguments: TransportKind.allCases, [("a", 1), ("z9", 5_000)])
    func aCompressedBodyArrivesDecodedWhetherSmallerOrLargerThanItsText(
        kind: TransportKind, sample: (text: String, repeats: Int)
    ) async throws {
        let (text, repeats) = sample
        let server = try await RawServer.start()
        defer { server.stop() }
        let response = try await kind.make().send(server.request("/gzip?text=\(text)&repeat=\(repeats)"))
        #expect(response.statusCode == 200)
        #expect(response.text == String(repeating: text, count: repeats))
    }

    @Test(arguments: TransportKind.allCases)
    func chunkedBodiesWithAndWithoutAStrayLengthArriveWhole(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let plain = try await transport.send(server.request("/stream?count=100000"))
        let withLength = try await transport.send(server.request("/chunked-and-length?count=100000"))
        #expect(plain.body == Data(repeating: UInt8(ascii: "y"), count: 100_000))
        #expect(withLength.body == Data(repeating: UInt8(ascii: "z"), count: 100_000))
    }

    @Test(arguments: TransportKind.allCases)
    func aServerClosingEveryThirdKeptAliveConnectionLosesNoRequest(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        for round in 0..<30 {
            let response = try await transport.send(server.request("/churn"))
            #expect(response.text == "churn", "round \(round)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aKeptAliveConnectionTheServerClosedIsNotReusedForTheNextRequest(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        #expect(try await transport.send(server.request("/idle-close?after=0.05")).text == "idle")
        // Wait until the server reports it closed the idle connection (asked over another
        // transport, so the kept-alive connection stays idle).
        let observer = try kind.make()
        while try await observer.send(server.request("/closed-idle")).text == "0" {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await transport.send(server.request("/json")).statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyDrippingOneByteEvery200MillisecondsArrivesOrMeetsTheWholeExchangeDeadline(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let slow = try await transport.send(server.request("/drip?count=3&interval=0.2"))
        #expect(slow.text == "ddd")

        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/drip?count=60&interval=0.2", timeout: .milliseconds(700))) }
        let elapsed = ContinuousClock.now - started
        #expect(error?.transportFailure?.kind == .timedOut, "\(String(describing: error))")
        // Bytes keep arriving for 12 s, so an idle timeout would never fire and the body
        // would arrive whole: a timeout proves the deadline is for the whole exchange,
        // however long a busy machine took to report it.
        #expect(elapsed >= .milliseconds(690), "\(elapsed)")
    }

    @Test(arguments: TransportKind.allCases, ["/headers-then-silence", "/silence"])
    func silenceAfterTheHeadersOrFromTheStartMeetsTheDeadline(kind: TransportKind, path: String) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let started = ContinuousClock.now
        let error = await #expect(throws: HTTPClientError.self) { try await kind.make().send(server.request(path, timeout: .milliseconds(400))) }
        let elapsed = ContinuousClock.now - started
        #expect(error?.transportFailure?.kind == .timedOut, "\(String(describing: error))")
        // Without the deadline these requests never end: a timeout proves it fired, however
        // long a busy machine took to report it.
        #expect(elapsed >= .milliseconds(390), "\(elapsed)")
    }

    @Test(arguments: TransportKind.allCases)
    func aTruncatedBodyAndAResetConnectionAreTransportFailuresOfTheirKind(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let truncated = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/truncated")) }
        let reset = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/reset")) }
        #expect(truncated?.transportFailure?.kind == .truncatedResponse, "\(String(describing: truncated))")
        #expect(truncated?.description.contains("10 of 1000 bytes") == true, "\(String(describing: truncated))")
        #expect([.connectionReset, .badResponse].contains(reset?.transportFailure?.kind), "\(String(describing: reset))")
    }

    @Test(arguments: TransportKind.allCases, [301, 302, 303, 307, 308])
    func aRedirectIsReturnedNotFollowed(kind: TransportKind, status: Int) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let response = try await kind.make().send(
            server.request("/redirect?status=\(status)", method: .post, body: Data(#"{"a":1}"#.utf8))
        )
        #expect(response.statusCode == status)
        #expect(response.headers["Location"] == "/json")
        #expect(response.text == #"{"redirect": true}"#)
    }

    @Test(arguments: TransportKind.allCases)
    func anHTTP10AnswerWithoutLengthEndsAtClose(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let response = try await kind.make().send(server.request("/http10?count=5000"))
        #expect(response.statusCode == 200)
        #expect(response.body.count == 5_000)
    }

    @Test(arguments: TransportKind.allCases)
    func interimAnswersAreSkippedAndTheirFieldsDropped(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let response = try await kind.make().send(server.request("/interim", method: .post, body: Data("x".utf8)))
        #expect(response.statusCode == 200)
        #expect(response.text == "ok")
        #expect(response.headers["Link"] == nil)
    }

    @Test(arguments: TransportKind.allCases)
    func anIPv6LiteralBaseURLWorks(kind: TransportKind) async throws {
        let server = try await RawServer.start(["--ipv6"])
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url(""), transport: try kind.make())
        switch kind {
        case .curl:
            let echo = try await client.send(Endpoint<AnyName>(.get, "/json"))
            #expect(echo.name == "Ada")
        case .urlSession:
            // FoundationNetworking cannot reach IPv6 literals; the transport says so up front.
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<AnyName>(.get, "/json")) }
            #expect(error?.code == .invalidRequest)
            #expect(error?.description.contains("IPv6 literal address [::1]") == true, "\(String(describing: error))")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aBodyOverTheLimitIsRefusedByItsLengthOrAsItStreams(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let announced = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/bytes?count=1000000", limit: 65_536)) }
        let streamed = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/stream?count=2000000", limit: 65_536)) }
        let fits = try await transport.send(server.request("/bytes?count=65536", limit: 65_536))
        #expect(announced?.code == .responseTooLarge)
        #expect(streamed?.code == .responseTooLarge)
        #expect(fits.body.count == 65_536)
    }

    /// A refused answer ends its exchange once, and never kills the process: a cancel of
    /// the task from the transport that met the task's own completion made
    /// FoundationNetworking remove it from its registry twice ("a task that is not in the
    /// registry"); `moments timeline` did so about once in fifteen runs against a 130 MB
    /// answer, which arrives whole right after it is refused.
    @Test(arguments: TransportKind.allCases)
    func answersRefusedByTheirLengthOverAndOverLeaveTheProcessAndTheTransportWorking(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let refused = server.request("/bytes?count=1000000", limit: 65_536)
        for _ in 0..<10 {
            try await withThrowingTaskGroup(of: HTTPClientError.Code?.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            _ = try await transport.send(refused)
                            return nil
                        } catch let error as HTTPClientError {
                            return error.code
                        }
                    }
                }
                for try await code in group { #expect(code == .responseTooLarge) }
            }
        }
        let fits = try await transport.send(server.request("/bytes?count=65536", limit: 65_536))
        #expect(fits.body.count == 65_536)
        // And a transport shut down right after a refusal, as a tool does before it exits.
        for _ in 0..<40 {
            let transport = try kind.make()
            await #expect(throws: HTTPClientError.self) { try await transport.send(refused) }
            await transport.shutdown()
        }
    }

    /// An answer refused by its announced length does not keep its connection: the server
    /// goes on dripping the body it announced (a byte every 0.2 s, for days), and the
    /// transport's only connection to it must serve the next request. FoundationNetworking
    /// ignores a delegate's refusal, and the task it left running held the connection
    /// until its idle timeout, which a dripping body never lets come.
    @Test(arguments: TransportKind.allCases)
    func anAnswerRefusedByItsLengthGivesUpItsConnectionByItsDeadline(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make(maximumConnectionsPerHost: 1)
        let dripping = server.request("/drip?count=1000000&interval=0.2", timeout: .seconds(2), limit: 65_536)
        let refused = await #expect(throws: HTTPClientError.self) { try await transport.send(dripping) }
        #expect(refused?.code == .responseTooLarge, "\(String(describing: refused))")
        // Its own deadline is long: only a freed connection answers it in time.
        let next = try await transport.send(server.request("/json", timeout: .seconds(60)))
        #expect(next.statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aTwoGigabyteContentLengthIsRefusedAtOnce(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let error = await #expect(throws: HTTPClientError.self) { try await kind.make().send(server.request("/huge", timeout: .seconds(30), limit: 10 << 20)) }
        // Refused, not timed out: the 1 MiB the server sends is followed by silence, so only
        // the announced length can have ended the exchange before its 30 s deadline.
        #expect(error?.code == .responseTooLarge, "\(String(describing: error))")
    }

    @Test(arguments: TransportKind.allCases)
    func cancellationRacingCompletionAnswersEveryCallerAndTheTransportGoesOn(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        var outcomes = (values: 0, cancelled: 0)
        let request = server.request("/json", timeout: .seconds(10))
        for round in 0..<500 {
            let task = Task { try await transport.send(request) }
            if round % 4 != 0 { try await Task.sleep(for: .microseconds(round % 7 * 150)) }
            task.cancel()
            switch await task.result {
            case .success(let response):
                // A caller that got an answer got the whole of it.
                #expect(response.statusCode == 200 && response.text == #"{"name": "Ada", "id": 1}"#, "round \(round)")
                outcomes.values += 1
            case .failure(let error):
                #expect((error as? HTTPClientError)?.code == .cancelled, "\(error)")
                outcomes.cancelled += 1
            }
        }
        // Both outcomes happened, so the race was explored from both sides.
        #expect(outcomes.cancelled > 0)
        #expect(outcomes.values > 0)
        #expect(try await transport.send(server.request("/json")).statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func sixtyFourConcurrentRequestsAllSucceed(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let requests = (0..<64).map { server.request("/echo", method: .post, body: Data("\($0)".utf8)) }
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for request in requests {
                group.addTask { try await transport.send(request).text }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(bodies.count == 64)
        #expect(Set(bodies).count == 64, "each answer belongs to its own request")
    }

    @Test(arguments: TransportKind.allCases)
    func methodHeadersAndBodyReachTheServerAsSent(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        var request = server.request("/echo", method: .put, body: Data(#"{"x":"wörld"}"#.utf8))
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "X-Trace", value: "t-42")
        let echo = try JSONDecoder().decode(Echo.self, from: try await kind.make().send(request).body)
        #expect(echo.method == "PUT")
        #expect(echo.headers["x-trace"] == "t-42")
        #expect(echo.headers["content-type"] == "application/json")
        #expect(echo.headers["expect"] == nil, "no 100-continue wait was asked for")
        #expect(echo.body == #"{"x":"wörld"}"#)
    }
}

private struct AnyName: Decodable, Sendable {
    let name: String
}

private struct Echo: Decodable {
    let method: String
    let headers: [String: String]
    let body: String
}

/// Every header value is checked the same way by both transports: a value holding CR, LF
/// or NUL (which could end the field early, or smuggle in another), or a name that is not
/// a token, refuses the request before anything is sent; the trace headers the client
/// makes are valid, so they never cost a request.
@Suite struct HeaderValueTests {
    @Test(arguments: TransportKind.allCases, ["a\r\nInjected: yes", "a\nb", "a\rb", "cut\u{0}here"])
    func aValueWithALineBreakOrNULIsRefusedBeforeAnythingIsSent(kind: TransportKind, value: String) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        for name in ["X-Note", "tracestate", "traceparent"] {
            var request = server.request("/echo")
            request.headers[name] = value
            let error = await #expect(throws: HTTPClientError.self) { try await transport.send(request) }
            #expect(error?.code == .invalidRequest, "\(kind) \(name): \(String(describing: error))")
        }
        var badName = server.request("/echo")
        badName.headers["X Note"] = "1"
        let error = await #expect(throws: HTTPClientError.self) { try await transport.send(badName) }
        #expect(error?.code == .invalidRequest)
        // Nothing reached the server: its next request is still the first it has answered.
        #expect(try await transport.send(server.request("/json")).statusCode == 200)
    }

    @Test(arguments: TransportKind.allCases)
    func aCallersHostileTracestateStillSendsTheRequest(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make())
        let hostile = "ok=1,Bad=2,x=\r\nInjected: yes,\(String(repeating: "y", count: 600))=1,café=3"
        let context = try #require(TraceContext(traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", tracestate: hostile))
        struct Echo: Decodable { let headers: [String: String] }
        let echo = try await TraceContext.withValue(context) { try await client.send(Endpoint<Echo>(.get, "/echo")) }
        #expect(echo.headers["tracestate"] == "ok=1")
        #expect(echo.headers["injected"] == nil)
    }
}
