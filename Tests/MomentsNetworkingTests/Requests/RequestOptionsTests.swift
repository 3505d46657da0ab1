import Foundation
@testable import MomentsNetworking
import MomentsSupport
import Testing
import MomentsHTTP

/// A request's policies come from its `options` alone, each unset one falling back to
/// the method (retries, caching) or to the client.
@Suite struct RequestOptionsTests {
    private struct Post: Request {
        typealias Response = Data
        var path: String { "/items" }
        var method: HTTPMethod { .post }
        var options = RequestOptions()
    }

    @Test func unsetRetriesAndCachingFollowTheMethod() {
        let options = RequestOptions()
        #expect(options.allowsRetry(for: .get) && options.allowsRetry(for: .put) && options.allowsRetry(for: .delete))
        #expect(!options.allowsRetry(for: .post) && !options.allowsRetry(for: .patch))
        #expect(options.isCacheable(for: .get) && !options.isCacheable(for: .head) && !options.isCacheable(for: .post))
        let chosen = RequestOptions(allowsRetry: false, isCacheable: true)
        #expect(!chosen.allowsRetry(for: .get) && chosen.isCacheable(for: .post))
    }

    @Test func aPostIsRetriedOnlyWhenItsOptionsSaySo() async throws {
        let sends = PThreadMutex(0)  // the attempts since the last reset
        let transport = StubTransport { _ in
            let earlier = sends.withLock { count in
                defer { count += 1 }
                return count
            }
            if earlier == 0 { throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "reset")) }
            return HTTPResponse(statusCode: 200, body: Data("ok".utf8))
        }
        let client = testClient(transport) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 3, sleep: { _ in })
        }
        await #expect(throws: HTTPClientError.self) { try await client.send(Post()) }
        #expect(transport.requests.count == 1, "a POST is not retried by default")

        sends.withLock { $0 = 0 }
        let answer = try await client.send(Post(options: RequestOptions(allowsRetry: true)))
        #expect(answer == Data("ok".utf8))
        #expect(transport.requests.count == 3, "opted in, it is sent again after the reset")
    }

    @Test func theDeadlineAndTheDownloadFileComeFromTheOptions() async throws {
        let transport = StubTransport(statusCode: 200, body: Data())
        let client = testClient(transport) { $0.timeout = .seconds(30) }
        _ = try await client.send(Post(options: RequestOptions(timeout: .seconds(2))))
        let sent = try #require(transport.requests.last)
        #expect(sent.timeout <= .seconds(2), "the request's own deadline, not the client's 30 s")

        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("options-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: destination) }
        let writer = StubTransport { request in
            let file = try #require(request.destination)
            try Data("exported".utf8).write(to: file)
            return HTTPResponse(statusCode: 200, body: Data(), bodyFile: file)
        }
        let downloader = testClient(writer)
        let file = try await downloader.send(FileDownload(path: "/export", to: destination))
        // The transport writes beside the destination, which the answer then replaces.
        let written = try #require(writer.requests.last?.destination)
        #expect(written != destination && written.deletingLastPathComponent() == destination.deletingLastPathComponent())
        #expect(file == destination && !FileManager.default.fileExists(atPath: written.path))
        #expect(try Data(contentsOf: file) == Data("exported".utf8))
    }
}

