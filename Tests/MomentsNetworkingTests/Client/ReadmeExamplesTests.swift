import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// The README's examples of uploads, progress, downloads and dependent requests, as
/// written there, run against a loopback server (`Tools/fixture-server/upload_server.py`).
@Suite struct ReadmeExamplesTests {
    struct Receipt: Decodable, Sendable {
        let length: Int
        let sha256: String
    }

    struct UploadVideo: Request {
        typealias Response = Receipt
        let file: URL
        var method: HTTPMethod { .post }
        var path: String { "/upload" }
        var body: RequestBody? { .file(file, contentType: "video/mp4") }
    }

    @Test func uploadsProgressAndDownloads() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/upload_server.py")
        defer { server.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let photoURL = directory.url.appendingPathComponent("night.jpg")
        let videoURL = directory.url.appendingPathComponent("clip.mp4")
        let destination = directory.url.appendingPathComponent("export.bin")
        try Data(repeating: 1, count: 50_000).write(to: photoURL)
        try Data(repeating: 2, count: 2_000_000).write(to: videoURL)
        let client = HTTPClient(baseURL: server.baseURL)
        var reported: [TransferProgress] = []

        // README: "Uploads, downloads and progress"
        var form = MultipartForm()
        form.addField("caption", "Tokyo at night")
        form.addFile("photo", at: photoURL, contentType: "image/jpeg")
        let posted = try await client.send(Endpoint<Receipt>(.post, "/upload").body(.multipart(form)))

        let upload = client.transfer(UploadVideo(file: videoURL))
        for await progress in upload.progress {
            reported.append(progress)  // README: print("\(progress.sent) of \(progress.expectedToSend ?? 0) bytes sent")
        }
        let receipt = try await upload.value

        let file = try await client.send(FileDownload(path: "/download?size=1000000", to: destination))
        // End of the README's example.

        #expect(posted.length > 50_000)
        #expect(receipt.length == 2_000_000)
        #expect(reported.last?.sent == 2_000_000)
        #expect((try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) == 1_000_000)
    }

    /// Dependent requests are plain `await`s: each step sees the answer before it, and a
    /// failure or a cancellation stops the rest (a later request is never sent).
    @Test(arguments: ["all", "failure", "cancellation"])
    func dependentRequestsAreSequentialAwaits(ending: String) async throws {
        let transport = ScriptedTransport(delay: ending == "cancellation" ? .milliseconds(300) : .zero) { _, request in
            switch request.url.path {
            case "/v1/me": ok(#"{"id":7,"name":"Ada"}"#)
            case "/v1/users/7/friends" where ending == "failure": status(500)
            case "/v1/users/7/friends": ok(#"[{"id":8,"name":"Grace"}]"#)
            default: ok(#"{"id":8,"name":"Grace (details)"}"#)
            }
        }
        let client = testClient(transport)
        let steps = Task {
            // README: "Dependent requests"
            let me = try await client.send(Endpoint<User>(.get, "/me"))
            let friends = try await client.send(Endpoint<[User]>(.get, "/users/\(segment: String(me.id))/friends"))
            let first = try await client.send(Endpoint<User>(.get, "/users/\(segment: String(friends[0].id))"))
            return first.name
        }
        switch ending {
        case "all":
            #expect(try await steps.value == "Grace (details)")
            #expect(transport.requests.map(\.url.path) == ["/v1/me", "/v1/users/7/friends", "/v1/users/8"])
        case "failure":
            await #expect(throws: HTTPClientError.self) { try await steps.value }
            #expect(transport.requests.map(\.url.path) == ["/v1/me", "/v1/users/7/friends"])
        default:
            await transport.waitForCalls(1)
            steps.cancel()
            #expect(((await steps.result).error as? HTTPClientError)?.code == .cancelled)
            #expect(transport.calls == 1)
        }
    }
}
