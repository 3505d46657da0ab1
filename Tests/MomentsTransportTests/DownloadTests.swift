import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// Downloads to a file and the progress of uploads and downloads, through every
/// transport, against loopback servers (`upload_server.py` sends a fixed pattern with
/// its SHA-256 in a header; `raw_server.py` misbehaves).
@Suite struct DownloadTests {
    struct Send: Request {
        typealias Response = Data
        let body: RequestBody?
        var method: HTTPMethod { .post }
        var path: String { "/upload" }
    }

    static func permissions(of file: URL) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? Int) ?? -1
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func aDownloadIsWrittenToItsFileWithProgress(kind: TransportKind, chunked: Bool) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("download.bin")
        let size = 3_000_017
        // A longer file readable by all is there already: replaced whole, and made the owner's.
        try Data(repeating: 1, count: size + 1_000).write(to: destination)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: destination.path)
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make())
        let transfer = client.transfer(FileDownload(
            path: "/download", to: destination, query: [URLQueryItem(name: "size", value: "\(size)"), URLQueryItem(name: "chunked", value: chunked ? "1" : "0")]
        ))
        var seen: [TransferProgress] = []
        for await progress in transfer.progress { seen.append(progress) }
        let file = try await transfer.value

        #expect(file == destination)
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) == size)
        #expect(try Self.permissions(of: file) == 0o600)
        let expected = try await client.response(for: FileDownload(path: "/download", to: directory.url.appendingPathComponent("again.bin"),
                                                                   query: [URLQueryItem(name: "size", value: "\(size)")]))
        #expect(try await FileDigest.sha256(of: file) == expected.headers["X-Content-SHA256"])
        #expect(!seen.isEmpty)
        #expect(seen.map(\.received) == seen.map(\.received).sorted(), "received counts only grow: \(seen.map(\.received))")
        #expect(seen.last?.received == Int64(size))
        #expect(seen.last?.expectedToReceive == (chunked ? nil : Int64(size)))
    }

    @Test(arguments: TransportKind.allCases)
    func anUploadReportsWhatItHasSent(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = directory.url.appendingPathComponent("up.bin")
        try Data(repeating: 7, count: 4_000_000).write(to: file)
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make())
        let transfer = client.transfer(Send(body: .file(file)))
        var seen: [TransferProgress] = []
        for await progress in transfer.progress { seen.append(progress) }
        _ = try await transfer.value
        #expect(seen.map(\.sent) == seen.map(\.sent).sorted(), "sent counts only grow: \(seen.map(\.sent))")
        #expect(seen.last?.sent == 4_000_000)
        #expect(seen.last?.expectedToSend == 4_000_000)
    }

    @Test(arguments: TransportKind.allCases)
    func aDownloadOverTheSizeLimitFailsAndLeavesNoFile(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("large.bin")
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make()) { $0.maximumResponseSize = 1_000_000 }
        for chunked in ["0", "1"] {
            await #expect(throws: HTTPClientError.self) {
                _ = try await client.send(FileDownload(path: "/download", to: destination,
                                                       query: [URLQueryItem(name: "size", value: "5000000"), URLQueryItem(name: "chunked", value: chunked)]))
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path), "chunked \(chunked)")
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aDownloadPastItsDeadlineOrCutShortLeavesNoFile(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("slow.bin")
        let client = HTTPClient.patient(baseURL: server.url(""), transport: try kind.make()) { $0.retryPolicy = nil }
        let slow = FileDownload(path: "/drip", to: destination, query: [URLQueryItem(name: "count", value: "50")], timeout: .milliseconds(700))
        do {
            _ = try await client.send(slow)
            Issue.record("a body dripping for 10 s arrived within 0.7 s")
        } catch let error as HTTPClientError {
            #expect(error.transportFailure?.kind == .timedOut, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        await #expect(throws: HTTPClientError.self) { _ = try await client.send(FileDownload(path: "/truncated", to: destination)) }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test(arguments: TransportKind.allCases)
    func aFailureStatusIsAServerErrorWithItsBodyAndNoFile(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("missing.bin")
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make())
        do {
            _ = try await client.send(FileDownload(path: "/no-such-file", to: destination))
            Issue.record("a 404 was taken for a download")
        } catch let error as HTTPClientError {
            #expect(error.code == .serverError)
            #expect(error.statusCode == 404)
            #expect(error.response.map { String(decoding: $0.body, as: UTF8.self) }?.contains("no such route") == true)
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectTheClientRefusesLeavesNoFile(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("elsewhere.bin")
        let transport = try kind.make()
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: transport)
        let download = FileDownload(path: "/redirect", to: destination, query: [
            URLQueryItem(name: "status", value: "302"), URLQueryItem(name: "to", value: "http://127.0.0.2:9/file"),
        ])
        do {
            _ = try await client.send(download)
            Issue.record("a redirect to another origin was followed")
        } catch let error as HTTPClientError {
            #expect(error.code == .redirectFailure, "\(error)")
        }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        if let session = transport as? URLSessionTransport {
            // The download task cancelled at the redirect ends, and lets go of its exchange.
            #expect(await eventually(timeout: .seconds(30)) { session.requestsInFlight == 0 })
        }
    }

    @Test(arguments: TransportKind.allCases)
    func aRedirectTheClientFollowsDownloadsItsTarget(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let destination = directory.url.appendingPathComponent("followed.json")
        let client = HTTPClient.patient(baseURL: server.url(""), transport: try kind.make())
        let file = try await client.send(FileDownload(path: "/redirect", to: destination, query: [URLQueryItem(name: "status", value: "302")]))
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any]
        #expect(json?["name"] as? String == "Ada", "the file holds the redirect's target, not its own body")
    }

    @Test func aRequestAnsweringWithAFileMustNameOne() async throws {
        struct Nowhere: Request {
            typealias Response = URL
            var path: String { "/download" }
        }
        let transport = StubTransport(statusCode: 200)
        let client = HTTPClient.patient(baseURL: URL(string: "http://127.0.0.1:9")!, transport: transport)
        await #expect(throws: HTTPClientError.self) { _ = try await client.send(Nowhere()) }
        #expect(transport.requests.isEmpty)
    }
}
