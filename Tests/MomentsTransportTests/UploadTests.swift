import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// Streamed bodies (a file, a `multipart/form-data` form with files) through every
/// transport, to a loopback server (`Tools/fixture-server/upload_server.py`) that hashes
/// every byte it receives and parses the form as it streams in.
@Suite struct UploadTests {
    struct Upload: Decodable {
        struct Part: Decodable {
            let name: String?
            let filename: String?
            let contentType: String?
            let length: Int
            let sha256: String
        }

        let length: Int
        let sha256: String
        let contentType: String
        let parts: [Part]?
    }

    struct Send: Request {
        typealias Response = Upload
        let body: RequestBody?
        var method: HTTPMethod { .post }
        var path: String { "/upload" }
    }

    /// A file of `count` bytes of a varied pattern.
    static func file(_ count: Int, in directory: TemporaryDirectory, name: String = "upload.bin") throws -> URL {
        let url = directory.url.appendingPathComponent(name)
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 7 &+ index >> 9) }
        try Data(bytes).write(to: url)
        return url
    }

    @Test(arguments: TransportKind.allCases)
    func aFileIsSentWholeWithItsLength(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try Self.file(3_000_001, in: directory)
        let digest = try await FileDigest.sha256(of: file)
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make())
        let upload = try await client.send(Send(body: .file(file, contentType: "application/x-test")))
        #expect(upload.length == 3_000_001)
        #expect(upload.sha256 == digest)
        #expect(upload.contentType == "application/x-test")
    }

    @Test(arguments: TransportKind.allCases)
    func aMultipartFormArrivesPartByPart(kind: TransportKind) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let large = try Self.file(1_500_000, in: directory, name: "large.bin")
        let empty = try Self.file(0, in: directory, name: "empty.bin")
        let largeDigest = try await FileDigest.sha256(of: large)
        let emptyDigest = try await FileDigest.sha256(of: empty)
        var form = MultipartForm()
        form.addField("caption", "東京の夜 \"quoted\"\r\nnext line")
        form.addFile("photo", at: large, contentType: "image/jpeg")
        form.addFile("nothing", at: empty, fileName: "renamed.txt", contentType: "text/plain")
        form.addData("inline", Data("--not-the-boundary".utf8), fileName: "inline.txt")
        let client = HTTPClient.patient(baseURL: server.baseURL, transport: try kind.make())
        let upload = try await client.send(Send(body: .multipart(form)))

        #expect(upload.contentType == "multipart/form-data; boundary=\(form.boundary)")
        let parts = try #require(upload.parts)
        #expect(parts.map(\.name) == ["caption", "photo", "nothing", "inline"])
        #expect(parts.map(\.filename) == [nil, "large.bin", "renamed.txt", "inline.txt"])
        #expect(parts.map(\.contentType) == [nil, "image/jpeg", "text/plain", "application/octet-stream"])
        #expect(parts[0].sha256 == FileDigest.sha256(of: Array("東京の夜 \"quoted\"\r\nnext line".utf8)))
        #expect(parts[1].length == 1_500_000 && parts[1].sha256 == largeDigest)
        #expect(parts[2].length == 0 && parts[2].sha256 == emptyDigest)
        #expect(parts[3].sha256 == FileDigest.sha256(of: Array("--not-the-boundary".utf8)))
        #expect(Int64(upload.length) == (try RequestBody.multipart(form).streamedBody()?.length))
    }

    @Test func aMissingFileIsRefusedBeforeAnythingIsSent() async throws {
        let transport = StubTransport { _ in HTTPResponse(statusCode: 200, body: Data("{}".utf8)) }
        let client = HTTPClient.patient(baseURL: URL(string: "http://127.0.0.1:9")!, transport: transport)
        var form = MultipartForm()
        form.addFile("photo", at: URL(fileURLWithPath: "/nonexistent/photo.jpg"))
        for body in [RequestBody.file(URL(fileURLWithPath: "/nonexistent/a.bin")), .multipart(form)] {
            await #expect(throws: HTTPClientError.self) { _ = try await client.send(Send(body: body)) }
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func aFileChangingLengthWhileSentFailsTheRequest() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try Self.file(100_000, in: directory)
        let body = StreamedBody([try StreamedBody.file(file)])
        try Data(count: 10).write(to: file)
        #expect(throws: HTTPClientError.self) { _ = try body.collected() }
        try Data(count: 200_000).write(to: file)
        #expect(throws: HTTPClientError.self) { _ = try body.collected() }
    }

    @Test func aReaderStartsAgainFromAnyOffset() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let file = try Self.file(70_000, in: directory)
        let body = StreamedBody([.bytes(Data("head".utf8)), try StreamedBody.file(file), .bytes(Data()), .bytes(Data("tail".utf8))])
        let whole = try body.collected()
        #expect(whole.count == 70_008)
        let reader = StreamedBody.Reader(body)
        var buffer = [UInt8](repeating: 0, count: 1_000)
        for offset in [0, 3, 4, 5, 69_999, 70_004, 70_007, 70_008] as [Int64] {
            try reader.seek(to: offset)
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            #expect(Data(buffer[0..<count]) == whole[Int(offset)..<min(whole.count, Int(offset) + 1_000)], "from \(offset)")
        }
        #expect(throws: HTTPClientError.self) { try reader.seek(to: 70_009) }
    }
}
