import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// A file is never destroyed by a failure: a download goes to a file beside its
/// destination and replaces it only on success. Attacked with a file already at the
/// download path (0644, "old report") and every way a download can fail before, while
/// and after it is sent, through both transports; and no download leaves a copy in the
/// system's temporary directory.
@Suite struct DownloadReplacementTests {
    private static let old = Data("old report".utf8)

    private struct Fixture {
        let server: RawServer
        let directory: TemporaryDirectory
        let destination: URL

        init() async throws {
            server = try await RawServer.start()
            directory = try TemporaryDirectory()
            destination = directory.url.appendingPathComponent("report.pdf")
            try DownloadReplacementTests.old.write(to: destination)
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: destination.path)
        }

        func stop() {
            server.stop()
            directory.remove()
        }

        /// The destination is as it was, and nothing else is left beside it.
        func expectUntouched(_ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
            #expect(try Data(contentsOf: destination) == DownloadReplacementTests.old, "\(label)", sourceLocation: sourceLocation)
            let mode = (try FileManager.default.attributesOfItem(atPath: destination.path)[.posixPermissions] as? Int) ?? -1
            #expect(mode == 0o644, "\(label): mode \(String(mode, radix: 8))", sourceLocation: sourceLocation)
            let left = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            #expect(left == ["report.pdf"], "\(label): \(left)", sourceLocation: sourceLocation)
        }
    }

    private struct Refusing: HTTPMiddleware {
        struct Refused: Error {}
        func intercept(_ request: HTTPRequest, context: RequestContext, next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
            throw Refused()
        }
    }

    @Test(arguments: TransportKind.allCases)
    func everyFailureLeavesTheFileAsItWas(kind: TransportKind) async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let client = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: try kind.make()) { $0.timeout = .seconds(10) }
        let cases: [(String, FileDownload)] = [
            ("no time at all", FileDownload(path: "/bytes", to: fixture.destination, query: [.init(name: "count", value: "9")], timeout: .zero)),
            ("a negative deadline", FileDownload(path: "/bytes", to: fixture.destination, query: [.init(name: "count", value: "9")], timeout: .seconds(-1))),
            ("a 404", FileDownload(path: "/status", to: fixture.destination, query: [.init(name: "code", value: "404")])),
            ("a body cut short", FileDownload(path: "/truncated", to: fixture.destination)),
            ("a reset", FileDownload(path: "/reset", to: fixture.destination)),
            ("a deadline passing mid-body", FileDownload(path: "/drip", to: fixture.destination,
                                                         query: [.init(name: "count", value: "50"), .init(name: "interval", value: "0.1")], timeout: .milliseconds(300))),
        ]
        for (label, download) in cases {
            await #expect(throws: HTTPClientError.self, "\(label)") { try await client.send(download) }
            try fixture.expectUntouched(label)
        }
        let refusing = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: try kind.make()) { $0.middlewares = [Refusing()] }
        await #expect(throws: HTTPClientError.self) { try await refusing.send(FileDownload(path: "/bytes", to: fixture.destination)) }
        try fixture.expectUntouched("a middleware that throws")
    }

    /// Calls refused before anything is sent: the breaker open, the client overloaded, a
    /// call cancelled, or `cancelAll()`, while it waits for a slot.
    @Test(arguments: TransportKind.allCases)
    func aCallRefusedOrCancelledBeforeItIsSentLeavesTheFileAsItWas(kind: TransportKind) async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let download = FileDownload(path: "/bytes", to: fixture.destination, query: [.init(name: "count", value: "9")])

        let failing = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: try kind.make()) {
            $0.circuitBreaker = CircuitBreakerPolicy(minimumCalls: 2, openDuration: .seconds(60))
        }
        for _ in 0..<2 { _ = try? await failing.send(Endpoint<Data>(.get, "/status").query("code", "503")) }
        let open = await #expect(throws: HTTPClientError.self) { try await failing.send(download) }
        #expect(open?.code == .circuitOpen)
        try fixture.expectUntouched("the breaker open")

        let busy = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: try kind.make()) {
            $0.maximumConcurrentRequests = 1
            $0.maximumQueuedRequests = 1
        }
        let holder = Task { try await busy.send(Endpoint<Data>(.get, "/silence")) }
        while busy.requestsInFlight < 1 { await Task.yield() }
        let queued = Task { try await busy.send(download) }
        while busy.requestsInFlight < 2 { await Task.yield() }
        let overloaded = await #expect(throws: HTTPClientError.self) { try await busy.send(download) }
        #expect(overloaded?.code == .overloaded)
        try fixture.expectUntouched("the client overloaded")
        queued.cancel()
        #expect(await queued.result.error.map { ($0 as? HTTPClientError)?.code } == .cancelled)
        try fixture.expectUntouched("cancelled while it waited for a slot")
        let again = Task { try await busy.send(download) }
        while busy.requestsInFlight < 2 { await Task.yield() }
        busy.cancelAll()
        #expect(await again.result.error.map { ($0 as? HTTPClientError)?.code } == .cancelled)
        _ = await holder.result
        try fixture.expectUntouched("cancelAll() while it waited for a slot")
    }

    @Test(arguments: TransportKind.allCases)
    func aSuccessReplacesTheFileWholeAndMakesItTheOwnersOnly(kind: TransportKind) async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let client = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: try kind.make())
        let file = try await client.send(FileDownload(path: "/bytes", to: fixture.destination, query: [.init(name: "count", value: "3")]))
        #expect(file == fixture.destination)
        #expect(try Data(contentsOf: file) == Data("xxx".utf8))
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) == 0o600)
        #expect(try FileManager.default.contentsOfDirectory(atPath: fixture.directory.url.path) == ["report.pdf"])
    }

    /// FoundationNetworking's download tasks leave their body in the temporary directory;
    /// the transport writes downloads itself, so successes and failures alike leave
    /// nothing there.
    @Test func urlSessionDownloadsLeaveNothingInTheTemporaryDirectory() async throws {
        let fixture = try await Fixture()
        defer { fixture.stop() }
        let temporary = FileManager.default.temporaryDirectory.path
        func leftovers() throws -> Set<String> {
            Set(try FileManager.default.contentsOfDirectory(atPath: temporary).filter { $0.hasSuffix(".tmp") })
        }
        let before = try leftovers()
        let client = HTTPClient.patient(baseURL: fixture.server.url("/"), transport: URLSessionTransport())
        for round in 0..<5 {
            let target = fixture.directory.url.appendingPathComponent("round-\(round).bin")
            _ = try await client.send(FileDownload(path: "/bytes", to: target, query: [.init(name: "count", value: "100000")]))
            _ = try? await client.send(FileDownload(path: "/status", to: target, query: [.init(name: "code", value: "404")]))
            _ = try? await client.send(FileDownload(path: "/truncated", to: target))
        }
        #expect(try leftovers().subtracting(before).isEmpty)
    }
}
