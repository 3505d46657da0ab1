import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsCaching
import MomentsHTTP

/// The raw body beside the value, error envelopes inside 200 answers, and clearing the
/// cache.
@Suite struct AnswerShapeTests {
    /// A backend that answers 200 for everything, with `{"ok": false}` for failures.
    struct Envelope: Request {
        typealias Response = User
        var path: String { "/users/1" }
        var options: RequestOptions { RequestOptions(cachePolicy: .localOrRemote) }

        struct Failure: Decodable { let ok: Bool; let error: String? }

        func failure(forAccepted response: HTTPResponse, decoder: JSONDecoder) -> HTTPClientError? {
            guard let envelope = try? decoder.decode(Failure.self, from: response.body), !envelope.ok else { return nil }
            return .serverError(response)
        }
    }

    @Test func anErrorEnvelopeInA200IsATypedFailureAndIsNotCached() async throws {
        let transport = StubTransport { _ in jsonResponse(#"{"ok":false,"error":"no such user"}"#) }
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: transport) {
            $0.cache = MemoryResponseCache()
        }

        for _ in 0..<2 {
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(Envelope()) }
            #expect(error?.code == .serverError && error?.statusCode == 200)
        }
        #expect(transport.requests.count == 2, "a refused answer is never served from the cache")
    }

    @Test func theRawBodyTravelsWithTheValueFromTheNetworkAndFromTheCache() async throws {
        let body = #"{"name":"Ada","id":1,"extra":"kept"}"#
        let transport = StubTransport { _ in jsonResponse(body) }
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: transport) {
            $0.cache = MemoryResponseCache()
        }
        let request = Endpoint<User>(.get, "/users/1").options { $0.cachePolicy = .localOrRemote }

        let fresh = try await client.response(for: request)
        let cached = try await client.response(for: request)

        #expect(fresh.value.name == "Ada" && String(decoding: fresh.body, as: UTF8.self) == body)
        #expect(cached.isFromCache && String(decoding: cached.body, as: UTF8.self) == body)
    }

    @Test func clearCacheEmptiesTheClientsCache() async throws {
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: StubTransport { _ in jsonResponse(#"{"name":"Ada","id":1}"#) }) {
            $0.cache = MemoryResponseCache()
        }
        _ = try await client.send(Endpoint<User>(.get, "/users/1").options { $0.cachePolicy = .localOrRemote })
        #expect(try await client.response(for: Endpoint<User>(.get, "/users/1").options { $0.cachePolicy = .local }).isFromCache)

        try await client.clearCache()

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<User>(.get, "/users/1").options { $0.cachePolicy = .local }) }
        #expect(error?.code == .cacheMiss)
    }
}
