import Foundation
import MomentsNetworking
import Testing
import MomentsHTTP

@Suite struct EndpointTests {
    @Test func modifiersSetHeadersQueryBodyAndTimeout() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":2,"name":"Di"}"#.utf8))
        let client = testClient(transport)

        let user = try await client.send(
            Endpoint<User>(.put, "/users/\(segment: "2")")
                .header("X-Trace", "abc")
                .query("dry_run", "true")
                .query("empty", nil)
                .body(User(id: 2, name: "Di"))
                .options { $0.timeout = .milliseconds(1500) }
        )

        let sent = try #require(transport.requests.first)
        #expect(user == User(id: 2, name: "Di"))
        #expect(sent.method == .put)
        #expect(sent.url.absoluteString == "https://api.example.com/v1/users/2?dry_run=true&empty")
        #expect(sent.headers["x-trace"] == "abc")
        #expect(sent.headers["content-type"] == "application/json")
        #expect(try JSONDecoder().decode(User.self, from: sent.body ?? Data()) == User(id: 2, name: "Di"))
        #expect(sent.timeout <= .milliseconds(1500) && sent.timeout > .milliseconds(1000), "the call's deadline, less the time already spent")
    }

    @Test func rawBodiesAndRawResponses() async throws {
        let transport = StubTransport { request in HTTPResponse(statusCode: 200, body: request.body ?? Data()) }
        let client = testClient(transport)

        let echoed = try await client.send(
            Endpoint<Data>(.post, "/upload").body(.data(Data([1, 2, 3]), contentType: "image/png"))
        )
        try await client.send(Endpoint<Void>(.head, "/ping"))

        #expect(echoed == Data([1, 2, 3]))
        #expect(transport.requests[0].headers["Content-Type"] == "image/png")
        #expect(transport.requests[1].method == .head)
    }

    @Test func aCustomDecodingSeesTheWholeResponse() async throws {
        let transport = StubTransport(statusCode: 200, headers: ["X-Total": "42"], body: Data())
        let client = testClient(transport)

        let total = try await client.send(Endpoint<Int>(.get, "/count") { response, _ in
            Int(response.headers["x-total"] ?? "") ?? -1
        })

        #expect(total == 42)
    }
}
