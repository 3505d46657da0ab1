import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsGraphQL
import MomentsHTTP

/// Every failure the server answered names its status and the URL, whatever the body
/// (plain, gzip-encoded, a GraphQL error envelope) and whichever transport carried it.
@Suite struct FailureStatusTests {
    /// A GraphQL operation sent to the raw server's `/status` route.
    struct RefusedQuery: GraphQLOperation {
        typealias Response = ResponseData
        struct Variables: Encodable, Sendable {}
        struct ResponseData: Decodable, Sendable { var ok: Bool }
        static let document = "query ok { ok }"
        static let operationName = "ok"
        var variables = Variables()
        let gzip: Bool
        let code: Int
        var path: String { "/status" }
        var query: [URLQueryItem] { [URLQueryItem(name: "code", value: String(code)), URLQueryItem(name: "gzip", value: gzip ? "1" : "0")] }
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func aGraphQLErrorUnderAFailureStatusNamesTheStatusAndTheURL(kind: TransportKind, gzip: Bool) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make())
        for (code, text) in [(401, "401 Unauthorized"), (403, "403 Forbidden"), (503, "503 Service Unavailable")] {
            let error = await #expect(throws: HTTPClientError.self) { try await client.send(RefusedQuery(gzip: gzip, code: code)) }
            #expect(error?.code == .graphQLFailure)
            #expect(error?.statusCode == code)
            #expect(error?.graphQLErrors.map(\.message) == ["Unauthorized"])
            let description = error.map(String.init(describing:)) ?? ""
            #expect(description.contains(text), "\(description)")
            #expect(description.contains("/status"), "\(description)")
        }
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func aPlainFailureStatusIsNamedWithItsText(kind: TransportKind, gzip: Bool) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make())
        let endpoint = Endpoint<Data>(.get, "/status").query("code", "404").query("gzip", gzip ? "1" : "0")
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(endpoint) }
        #expect(error?.code == .serverError)
        let description = error.map(String.init(describing:)) ?? ""
        #expect(description.contains("404 Not Found") && description.contains("/status"), "\(description)")
    }

    @Test(arguments: TransportKind.allCases)
    func aTokenRefusedAndNotRefreshedNamesTheRefusal(kind: TransportKind) async throws {
        struct NoRefresh: TokenProvider {
            struct Refused: Error {}
            func currentToken() async throws -> String { "secret-token" }
            func refreshToken(replacing rejected: String) async throws -> String { throw Refused() }
        }
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make()) {
            $0.authentication = AuthenticationMiddleware(provider: NoRefresh())
        }
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(RefusedQuery(gzip: true, code: 401)) }
        #expect(error?.code == .authenticationFailure)
        #expect(error?.statusCode == 401)
        let description = error.map(String.init(describing:)) ?? ""
        #expect(description.contains("401 Unauthorized") && description.contains("/status"), "\(description)")
        #expect(!description.contains("secret-token"))
    }
}
