import Foundation
import MomentsNetworking
import Testing
import MomentsSupport
import MomentsHTTP

private final class Trace: Sendable {
    let events = PThreadMutex<[String]>([])
    func add(_ event: String) { events.withLock { $0.append(event) } }
    var all: [String] { events.withLock { $0 } }
}

private struct Tagging: HTTPMiddleware {
    let name: String
    let trace: Trace
    func intercept(_ request: HTTPRequest, context: RequestContext, next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
        trace.add("→\(name)")
        var request = request
        request.headers.add(name: "X-Path", value: name)
        var response = try await next(request)
        trace.add("←\(name)")
        response.headers.add(name: "X-Back", value: name)
        return response
    }
}

private struct Failing: HTTPMiddleware {
    struct Broken: Error {}
    func intercept(_ request: HTTPRequest, context: RequestContext, next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
        throw Broken()
    }
}

@Suite struct MiddlewareTests {
    @Test func requestsPassInOrderAndResponsesInReverse() async throws {
        let trace = Trace()
        let transport = StubTransport(statusCode: 200, body: Data(#"{"id":1,"name":"Ada"}"#.utf8))
        let client = testClient(transport) {
            $0.middlewares = [Tagging(name: "a", trace: trace), Tagging(name: "b", trace: trace)]
        }

        let response = try await client.response(for: Endpoint<User>(.get, "/u").options { $0.middlewares.append(Tagging(name: "r", trace: trace)) })

        #expect(trace.all == ["→a", "→b", "→r", "←r", "←b", "←a"])
        #expect(transport.requests[0].headers.filter { $0.name == "X-Path" }.map(\.value) == ["a", "b", "r"])
        #expect(response.headers.filter { $0.name == "X-Back" }.map(\.value) == ["r", "b", "a"])
    }

    @Test func aMiddlewaresOwnErrorIsReportedAsSuch() async throws {
        let transport = StubTransport(statusCode: 200)
        let client = testClient(transport) { $0.middlewares = [Failing()] }

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/u")) }

        #expect(error?.code == .middlewareFailure)
        #expect(error?.underlyingError is Failing.Broken)
        #expect(error?.reason.contains("Failing") == true)
        #expect(transport.requests.isEmpty)
    }

    @Test func transportErrorsPassThroughMiddlewaresUnchanged() async throws {
        let trace = Trace()
        let client = testClient(StubTransport { _ in
            throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "reset"))
        }) { $0.middlewares = [Tagging(name: "a", trace: trace)] }

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/u")) }

        #expect(error?.code == .transportFailure)
        #expect(error?.transportFailure?.kind == .connectionReset)
    }
}
