import Foundation
@testable import MomentsCurl
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// What only `CurlTransport` offers: trust, identity and proxy controls, and the
/// negotiated protocol version, against real TLS and proxy servers on loopback.
@Suite struct CurlTransportTests {
    @Test func aSelfSignedServerIsTrustedOnlyThroughTheConfiguredAuthority() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.directory.remove() }
        let server = try await RawServer.start(["--tls", certificates.serverCertificate, certificates.serverKey])
        defer { server.stop() }
        let request = server.request("/json", scheme: "https")

        let refused = await #expect(throws: HTTPClientError.self) { try await CurlTransport().send(request) }
        #expect(refused?.transportFailure?.kind == .secureConnectionFailed, "\(String(describing: refused))")
        #expect(refused?.transportFailure?.message.contains("certificate") == true, "\(String(describing: refused))")
        #expect((refused?.underlyingError as? CurlError)?.code == 60)

        var configuration = CurlTransport.Configuration()
        configuration.certificateAuthorityFile = certificates.authority
        let trusted = try await CurlTransport(configuration: configuration).send(request)
        #expect(trusted.statusCode == 200)
        #expect(trusted.httpVersion == .http1_1)
    }

    @Test func aPinnedPublicKeyMustMatch() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.directory.remove() }
        let server = try await RawServer.start(["--tls", certificates.serverCertificate, certificates.serverKey])
        defer { server.stop() }
        let request = server.request("/json", scheme: "https")
        var configuration = CurlTransport.Configuration()
        configuration.certificateAuthorityFile = certificates.authority

        configuration.pinnedPublicKey = certificates.serverPin
        #expect(try await CurlTransport(configuration: configuration).send(request).statusCode == 200)

        configuration.pinnedPublicKey = "sha256//" + Data(repeating: 7, count: 32).base64EncodedString()
        let mismatch = await #expect(throws: HTTPClientError.self) { try await CurlTransport(configuration: configuration).send(request) }
        #expect(mismatch?.transportFailure?.kind == .secureConnectionFailed, "\(String(describing: mismatch))")
        #expect((mismatch?.underlyingError as? CurlError)?.code == 90)
    }

    @Test func aServerAskingForAClientCertificateGetsTheConfiguredOne() async throws {
        let certificates = try await TestCertificates.make()
        defer { certificates.directory.remove() }
        let server = try await RawServer.start([
            "--tls", certificates.serverCertificate, certificates.serverKey, "--client-ca", certificates.authority,
        ])
        defer { server.stop() }
        let request = server.request("/whoami", scheme: "https", )
        var configuration = CurlTransport.Configuration()
        configuration.certificateAuthorityFile = certificates.authority

        let anonymous = await #expect(throws: HTTPClientError.self) { try await CurlTransport(configuration: configuration).send(request) }
        #expect([.secureConnectionFailed, .connectionReset].contains(anonymous?.transportFailure?.kind), "\(String(describing: anonymous))")

        configuration.clientCertificate = .init(certificateFile: certificates.clientCertificate, keyFile: certificates.clientKey)
        let identified = try await CurlTransport(configuration: configuration).send(request)
        #expect(identified.text == "commonName=moments-client")
    }

    /// Whether the loop never watches, watches briefly, or watches long enough to catch
    /// every answer and request, sequential and concurrent callers all get their answers.
    @Test(arguments: [0, 50, 20_000])
    func everyBusyPollWindowAnswersSequentialAndConcurrentCallers(microseconds: Int) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let window = Duration.microseconds(microseconds)
        var configuration = CurlTransport.Configuration()
        configuration.busyPollWindow = window
        let request = server.request("/json")
        let transport = try CurlTransport(configuration: configuration)
        let expected = try await transport.send(request).body
        #expect(!expected.isEmpty)
        for round in 0..<30 {
            let body = try await transport.send(request).body
            #expect(body == expected, "window \(window), sequential request \(round)")
        }
        try await withThrowingTaskGroup(of: Data.self) { group in
            for _ in 0..<16 {
                group.addTask { try await transport.send(request).body }
            }
            for try await body in group { #expect(body == expected, "window \(window), concurrent request") }
        }
        #expect(await eventually { transport.requestsInFlight == 0 })
    }

    @Test func requestsGoThroughTheConfiguredProxyExceptForTheNoProxyList() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let proxy = try await ScriptServer(script: "Tools/fixture-server/proxy_server.py")
        defer { proxy.stop() }
        var configuration = CurlTransport.Configuration()
        configuration.proxy = .url("http://127.0.0.1:\(proxy.port)")

        let proxied = try await CurlTransport(configuration: configuration).send(server.request("/json"))
        #expect(proxied.statusCode == 200)
        #expect(proxied.headers["Via"] == "1.1 moments-test-proxy")

        configuration.noProxy = ["127.0.0.1"]
        let direct = try await CurlTransport(configuration: configuration).send(server.request("/json"))
        #expect(direct.statusCode == 200)
        #expect(direct.headers["Via"] == nil)
    }

    @Test func aHeaderFieldWithALineBreakIsRefusedBeforeSending() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        var request = server.request("/echo")
        request.headers.add(name: "X-Evil", value: "a\r\nInjected: yes")
        let error = await #expect(throws: HTTPClientError.self) { try await CurlTransport().send(request) }
        #expect(error?.code == .invalidRequest)
    }

    /// Handles are reused without being reset: nothing of one request may leak into the next.
    @Test func aReusedHandleCarriesNothingFromTheRequestBefore() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try CurlTransport()
        func echo(_ request: HTTPRequest) async throws -> [String: Any] {
            let response = try await transport.send(request)
            return try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        }
        let head = try await transport.send(server.request("/bytes?count=500", method: .head))
        #expect(head.body.isEmpty && head.headers["Content-Length"] == "500")

        var post = server.request("/echo", method: .post, body: Data("first".utf8))
        post.headers.add(name: "X-Only-First", value: "1")
        let posted = try await echo(post)
        #expect(posted["method"] as? String == "POST" && posted["body"] as? String == "first")
        #expect((posted["headers"] as? [String: String])?["x-only-first"] == "1")

        let got = try await echo(server.request("/echo"))
        #expect(got["method"] as? String == "GET" && got["body"] as? String == "")
        #expect((got["headers"] as? [String: String])?["x-only-first"] == nil)
        #expect((got["headers"] as? [String: String])?["content-length"] == nil)

        #expect(try await echo(server.request("/echo", method: .delete))["method"] as? String == "DELETE")
        #expect(try await echo(server.request("/echo"))["method"] as? String == "GET", "no custom method left behind")

        var identity = server.request("/echo")
        identity.headers.add(name: "Accept-Encoding", value: "identity")
        #expect((try await echo(identity)["headers"] as? [String: String])?["accept-encoding"] == "identity")
        let decoded = try await transport.send(server.request("/gzip?text=ab&repeat=100"))
        #expect(decoded.text == String(repeating: "ab", count: 100), "compression offered again")
    }

    /// The loop is woken only when it sleeps; a submission that raced its falling asleep
    /// and was not noticed would wait out the loop's 10-second poll. Bursts of requests
    /// from many tasks, with and without pauses, must each be answered well within that.
    @Test func noSubmissionWaitsForTheLoopsPollTimeout() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try CurlTransport()
        let request = server.request("/json", timeout: .seconds(30))
        let slowest = try await withThrowingTaskGroup(of: Duration.self) { group in
            for task in 0..<12 {
                group.addTask {
                    var generator = SeededGenerator(seed: UInt64(task))
                    var slowest = Duration.zero
                    for _ in 0..<60 {
                        if Bool.random(using: &generator) { await Task.yield() }
                        let started = ContinuousClock.now
                        let status = try await transport.send(request).statusCode
                        #expect(status == 200)
                        slowest = max(slowest, ContinuousClock.now - started)
                    }
                    return slowest
                }
            }
            return try await group.reduce(Duration.zero) { max($0, $1) }
        }
        #expect(slowest < .seconds(5), "a request waited \(slowest)")
    }

    /// More requests to one origin than it may have connections: the transport queues
    /// them itself and starts each the moment a connection frees up. Handed to libcurl
    /// 7.88 all at once, some waited out its 10-second connect timer.
    @Test func aBurstBeyondTheConnectionLimitNeverWaitsForLibcurlsTimers() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try CurlTransport()
        let request = server.request("/json", timeout: .seconds(30))
        var slowest = Duration.zero
        for _ in 0..<40 {
            let burst = try await withThrowingTaskGroup(of: Duration.self) { group in
                for _ in 0..<64 {
                    group.addTask {
                        let started = ContinuousClock.now
                        let status = try await transport.send(request).statusCode
                        #expect(status == 200)
                        return ContinuousClock.now - started
                    }
                }
                return try await group.reduce(Duration.zero) { max($0, $1) }
            }
            slowest = max(slowest, burst)
        }
        #expect(slowest < .seconds(5), "a request waited \(slowest)")
        #expect(transport.requestsInFlight == 0)
    }

    /// A request that waits for one of its origin's connections has its deadline running:
    /// it ends `timedOut` at it, without ever being sent, and leaves nothing in flight.
    @Test func aRequestWaitingForAConnectionTimesOutAtItsDeadline() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        var configuration = CurlTransport.Configuration()
        configuration.maximumConnectionsPerHost = 1
        let transport = try CurlTransport(configuration: configuration)
        let silence = server.request("/silence", timeout: .seconds(60))
        let holder = Task { try await transport.send(silence) }
        while transport.requestsInFlight < 1 { await Task.yield() }
        let error = await #expect(throws: HTTPClientError.self) {
            try await transport.send(server.request("/json", timeout: .milliseconds(200)))
        }
        #expect(error?.transportFailure?.kind == .timedOut, "\(String(describing: error))")
        holder.cancel()
        _ = await holder.result
        while transport.requestsInFlight > 0 { await Task.yield() }
        #expect(try await transport.send(server.request("/json")).statusCode == 200)
    }

    @Test func cancelledRequestsLeaveNothingInFlight() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try CurlTransport()
        let request = server.request("/silence", timeout: .seconds(60))
        let tasks = (0..<20).map { _ in Task { try await transport.send(request) } }
        for task in tasks { task.cancel() }
        for task in tasks {
            #expect((await task.result.error as? HTTPClientError)?.code == .cancelled)
        }
        // The loop lets each cancelled transfer go; wait for it to report so.
        while transport.requestsInFlight > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(try await transport.send(server.request("/json")).statusCode == 200)
        #expect(transport.requestsInFlight == 0)
    }
}

/// Large answers are gathered in memory the transport reuses; no answer may show
/// another's bytes, whatever the order of sizes and framings.
@Suite struct CurlBodyMemoryTests {
    private static func pattern(count: Int, seed: Int) -> Data {
        Data((0..<count).map { UInt8(($0 * 31 + seed) % 251) })
    }

    @Test func everyAnswerIsExactlyItsOwnBytesWhileMemoryIsReused() async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try CurlTransport()
        var generator = SeededGenerator(seed: 3)
        for round in 0..<40 {
            let count = [0, 10, 65_535, 65_536, 70_000, 200_000, 300_000, 1_100_000].randomElement(using: &generator)!
            let chunked = Bool.random(using: &generator)
            let seed = round % 251
            let path = "/pattern?count=\(count)&seed=\(seed)&chunked=\(chunked ? 1 : 0)"
            let response = try await transport.send(server.request(path, timeout: .seconds(30)))
            #expect(response.body == Self.pattern(count: count, seed: seed), "round \(round): \(path)")
        }
    }

    @Test func releasedBodiesReturnTheirMemoryUpToTheLimit() throws {
        let pool = BodyMemoryPool(idleLimit: 300_000)
        var first = try #require(pool.take(capacity: 100_000))
        #expect(first.capacity == 131_072)
        var data: Data? = pool.data(first, count: 100_000)
        #expect(data?.count == 100_000 && pool.idleBytes == 0)
        data = nil
        #expect(pool.idleBytes == 131_072)
        let again = try #require(pool.take(capacity: 120_000))
        #expect(again.pointer == first.pointer && pool.idleBytes == 0)
        first = try #require(pool.take(capacity: 70_000))
        let third = try #require(pool.take(capacity: 200_000))
        pool.recycle(again)
        pool.recycle(first)
        pool.recycle(third)  // 131,072 * 2 + 262,144 is over the limit: freed
        #expect(pool.idleBytes == 262_144)
        // Nothing idle fits 1 MB: the smallest idle buffer is let go, a new one made.
        let large = try #require(pool.take(capacity: 1_000_000))
        #expect(large.capacity == 1 << 20 && pool.idleBytes == 131_072)
        pool.recycle(large)
        #expect(pool.idleBytes == 131_072)
    }
}
