import Foundation
import MomentsHTTP
import MomentsNetworking
import MomentsTestSupport
import Testing

/// A body that cannot be encoded is the caller's mistake: a typed error, and nothing sent.
@Suite struct UnencodableBodyTests {
    private struct Unencodable: Encodable, Sendable {
        struct Refused: Error {}
        func encode(to encoder: any Encoder) throws { throw Refused() }
    }

    private struct PostUnencodable: Request {
        typealias Response = User
        var path: String { "/users" }
        var method: HTTPMethod { .post }
        var body: RequestBody? { .json(Unencodable()) }
    }

    @Test func theCallFailsAsAnInvalidRequestAndTheTransportIsNeverCalled() async throws {
        let transport = ScriptedTransport { _, _ in ok() }
        let client = HTTPClient.patient(baseURL: URL(string: "http://api.test")!, transport: transport)
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(PostUnencodable()) }
        #expect(error?.code == .invalidRequest)
        #expect(error?.description.contains("could not be encoded") == true, "\(String(describing: error))")
        #expect(error?.underlyingError is Unencodable.Refused)
        #expect(transport.calls == 0)
    }
}
