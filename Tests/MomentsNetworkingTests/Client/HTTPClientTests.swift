import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsTesting
import MomentsHTTP

@Suite struct HTTPClientTests {
    @Test func buildsTheURLFromBaseURLPathAndQuery() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport)

        _ = try await client.send(CreateUser(user: User(id: 1, name: "Ada")))

        let sent = try #require(transport.requests.first)
        #expect(sent.url.absoluteString == "https://api.example.com/v1/users?notify=a%2Bb%20c")
        #expect(sent.method == .post)
    }

    @Test func identifiersStayInTheirPathSegment() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport)

        _ = try await client.send(GetUser(id: "../admin?x=1#frag"))
        _ = try await client.send(GetUser(id: ".."))

        let urls = transport.requests.map(\.url)
        #expect(urls[0].absoluteString == "https://api.example.com/v1/users/..%2Fadmin%3Fx=1%23frag")
        #expect(urls[0].query == nil)
        #expect(urls[0].fragment == nil)
        #expect(urls[1].absoluteString == "https://api.example.com/v1/users/%2E%2E")
        #expect(URL(string: "/x/%2E%2E", relativeTo: urls[1])?.standardized.path != "/v1")
    }

    @Test func requestHeadersWinOverDefaults() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport) {
            $0.defaultHeaders = ["Accept": "application/json", "User-Agent": "moments-tests", "x-trace": "default"]
        }

        _ = try await client.send(CreateUser(user: User(id: 1, name: "Ada")))

        let headers = try #require(transport.requests.first).headers
        #expect(headers["accept"] == "application/vnd.users+json")
        #expect(headers["User-Agent"] == "moments-tests")
        #expect(headers["X-Trace"] == "t-1")
        #expect(headers.filter { $0.name.lowercased() == "x-trace" }.count == 1)
        #expect(headers["Content-Type"] == "application/json")
    }

    @Test func jsonBodiesUseTheClientsEncoder() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":7,"name":"Bo"}"#.utf8))
        let client = testClient(transport) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            $0.encoder = encoder
        }

        _ = try await client.send(CreateUser(user: User(id: 7, name: "Bo")))

        let body = try #require(transport.requests.first?.body)
        #expect(String(decoding: body, as: UTF8.self) == #"{"id":7,"name":"Bo"}"#)
    }

    @Test func timeoutDefaultsToTheClientsAndARequestOverridesIt() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport) {
            $0.clock = ManualClock()
            $0.timeout = .seconds(9)
            $0.maximumResponseSize = 1234
        }

        _ = try await client.send(GetUser(id: "1"))
        _ = try await client.send(CreateUser(user: User(id: 1, name: "Ada")))

        // The call's deadline: the attempt gets what is left of it (on a clock that
        // stands still, all of it).
        #expect(transport.requests.map(\.timeout) == [.seconds(9), .seconds(2)])
        #expect(transport.requests.map(\.maximumResponseSize) == [1234, 1234])
    }

    @Test func decodesJSONDataAndVoidResponses() async throws {
        let transport = StubTransport { request in
            switch request.url.path {
            case "/v1/avatar": HTTPResponse(statusCode: 200, body: Data([0xFF, 0x00, 0x01]))
            case "/v1/users/1" where request.method == .delete: HTTPResponse(statusCode: 204, body: Data("not json".utf8))
            default: jsonResponse(#"{"id":3,"name":"Cy"}"#)
            }
        }
        let client = testClient(transport)

        #expect(try await client.send(GetUser(id: "3")) == User(id: 3, name: "Cy"))
        #expect(try await client.send(DownloadAvatar()) == Data([0xFF, 0x00, 0x01]))
        try await client.send(DeleteUser())
        #expect(transport.requests.count == 3)
    }

    @Test func responseCarriesStatusHeadersAndDuration() async throws {
        let transport = StubTransport { _ in
            try await Task.sleep(for: .milliseconds(20))
            return jsonResponse(#"{"id":1,"name":"Ada"}"#, status: 201, headers: ["ETag": "\"v1\""])
        }
        let client = testClient(transport)

        let response = try await client.response(for: GetUser(id: "1"))

        #expect(response.value == User(id: 1, name: "Ada"))
        #expect(response.statusCode == 201)
        #expect(response.headers["etag"] == "\"v1\"")
        #expect(response.duration >= .milliseconds(20))
        #expect(response.isFromCache == false)
    }

    @Test func anInvalidRequestIsRejectedBeforeAnythingIsSent() async throws {
        let transport = StubTransport(statusCode: 200)
        let client = testClient(transport)

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(GetUser(id: "")) }

        #expect(error?.code == .invalidRequest)
        #expect(error?.underlyingError is ValidationError)
        #expect(error?.description.contains("the user id is empty") == true)
        #expect(transport.requests.isEmpty)
    }

    @Test func charactersAPathMustNotHoldAreEncoded() async throws {
        let transport = StubTransport(statusCode: 200)
        let client = testClient(transport)

        _ = try await client.send(Endpoint<Data>(.get, "/a path/%zz"))

        #expect(transport.requests.first?.url.absoluteString == "https://api.example.com/v1/a%20path/%25zz")
    }

    @Test func aFailureStatusKeepsStatusHeadersAndBody() async throws {
        let transport = StubTransport { _ in
            jsonResponse(#"{"error":"no such user"}"#, status: 404, headers: ["X-Request-ID": "r-9"])
        }
        let client = testClient(transport)

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(GetUser(id: "9")) }

        let failure = try #require(error)
        #expect(failure.code == .serverError)
        #expect(failure.statusCode == 404)
        #expect(failure.response?.headers["x-request-id"] == "r-9")
        #expect(try failure.decodeBody(as: APIError.self) == APIError(error: "no such user"))
        #expect(failure.method == .get)
        #expect(failure.url?.path == "/v1/users/9")
        #expect(failure.description.contains("404"))
    }

    @Test func acceptedStatusCodesAreConfigurable() async throws {
        let transport = StubTransport { _ in jsonResponse(#"{"id":1,"name":"Ada"}"#, status: 304) }
        let strict = testClient(transport)
        let lenient = testClient(transport) { $0.acceptedStatusCodes = 200..<400 }

        await #expect(throws: HTTPClientError.self) { try await strict.send(GetUser(id: "1")) }
        #expect(try await lenient.send(GetUser(id: "1")).name == "Ada")
    }

    @Test func aRequestCanInterpretAFailureStatus() async throws {
        struct Teapot: Request {
            typealias Response = Data
            var path: String { "/teapot" }
            func failure(for response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? {
                .invalidRequest("teapots brew no coffee (\(response.statusCode))")
            }
        }
        let client = testClient(StubTransport(statusCode: 418))

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Teapot()) }

        #expect(error?.code == .invalidRequest)
        #expect(error?.reason == "teapots brew no coffee (418)")
    }

    @Test func aDecodingFailureNamesTheTypeThePathAndTheBody() async throws {
        struct ListUsers: Request {
            typealias Response = [User]
            var path: String { "/users" }
        }
        let body = #"[{"id":1,"name":"Ada"},{"id":"two","name":"Bo"}]"#
        let client = testClient(StubTransport(statusCode: 200, body: Data(body.utf8)))

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(ListUsers()) }

        let failure = try #require(error?.decodingFailure)
        #expect(error?.code == .decodingFailure)
        #expect(failure.typeName == "Array<User>")
        #expect(failure.codingPath == "[1].id")
        #expect(failure.bodyExcerpt == body)
        #expect(error?.response?.body == Data(body.utf8))
    }

    @Test func aBodyOverTheLimitIsRejected() async throws {
        let client = testClient(StubTransport(statusCode: 200, body: Data(count: 11))) {
            $0.maximumResponseSize = 10
        }

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(DownloadAvatar()) }

        #expect(error?.code == .responseTooLarge)
        #expect(error?.description.contains("10 bytes") == true)
    }

    @Test func transportErrorsAreNormalized() async throws {
        struct Boom: Error {}
        let failing = testClient(StubTransport { _ in throw Boom() })
        let cancelling = testClient(StubTransport { _ in throw CancellationError() })

        let failure = await #expect(throws: HTTPClientError.self) { try await failing.send(DownloadAvatar()) }
        let cancellation = await #expect(throws: HTTPClientError.self) { try await cancelling.send(DownloadAvatar()) }

        #expect(failure?.code == .transportFailure)
        #expect(failure?.transportFailure?.kind == .other)
        #expect(cancellation?.code == .cancelled)
    }

    @Test func aCancelledTaskSendsNothing() async throws {
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport)

        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(GetUser(id: "1"))
        }
        let result = await task.result

        #expect((result.error as? HTTPClientError)?.code == .cancelled)
        #expect(transport.requests.isEmpty)
    }

    @Test func errorTextNeverShowsCredentials() async throws {
        let secret = "s3cr3t-token-value"
        let transport = StubTransport { _ in jsonResponse(#"{"error":"denied"}"#, status: 401) }
        let client = testClient(transport) {
            $0.defaultHeaders = ["Authorization": "Bearer \(secret)", "X-Api-Auth-Token": secret]
        }

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(Endpoint<Data>(.get, "/me").query("access_token", secret))
        }

        let text = try #require(error).description + String(describing: error) + String(reflecting: error?.reason)
        #expect(!text.contains(secret))
        #expect(!transport.requests[0].headers.description.contains(secret))
        #expect(transport.requests[0].headers.description.contains("<redacted>"))
    }
}
