import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsObservability
import MomentsGraphQL
import MomentsHTTP

/// A server that echoes the credentials it received in every way it can: no error text,
/// GraphQL message, body excerpt or log field the SDK produces may repeat them.
@Suite struct SecretRedactionTests {
    static let token = "SECRET123token"
    static let cookie = "COOKIEVALUE789"

    /// Every way a server can reflect what it was sent.
    enum Reflection: String, CaseIterable, Sendable {
        case plainTextFailure, jsonFailure, htmlFailure, graphQLError, undecodableBody, transportMessage, unauthorized
    }

    private static func reflect(_ reflection: Reflection, _ request: HTTPRequest) throws -> HTTPResponse {
        let sent = (request.headers["Authorization"] ?? "") + " cookie " + (request.headers["Cookie"] ?? "")
        switch reflection {
        case .plainTextFailure:
            return HTTPResponse(statusCode: 500, headers: ["Content-Type": "text/plain"], body: Data("token \(sent) is not allowed".utf8))
        case .jsonFailure:
            return jsonResponse(#"{"error":"bad token \#(sent)"}"#, status: 400)
        case .htmlFailure:
            return HTTPResponse(statusCode: 502, headers: ["Content-Type": "text/html"], body: Data("<html><body><pre>\(sent)</pre></body></html>".utf8))
        case .graphQLError:
            return jsonResponse(#"{"data":null,"errors":[{"message":"token \#(sent) is not allowed"}]}"#)
        case .undecodableBody:
            return jsonResponse(#"{"data":{"user":{"id":"\#(sent)"}}}"#)
        case .transportMessage:
            throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "reset while sending \(sent)"))
        case .unauthorized:
            return HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer \(sent)"], body: Data("denied: \(sent)".utf8))
        }
    }

    @Test(arguments: Reflection.allCases)
    func noErrorTextNorLogRecordRepeatsACredential(reflection: Reflection) async throws {
        let records = PThreadMutex<[LogRecord]>([])
        // Patient: on a loaded machine the default 30 s deadline can pass before the stub's
        // answer is handled, and a timeout carries no text of the server's to redact.
        let client = HTTPClient.patient(
            baseURL: URL(string: "https://api.example.com")!,
            transport: StubTransport { try Self.reflect(reflection, $0) }
        ) {
            $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(Self.token))
            $0.defaultHeaders["Cookie"] = "session=\(Self.cookie)"
            $0.logLevel = .debug
            $0.logHandler = { record in records.withLock { $0.append(record) } }
        }

        let error = await #expect(throws: HTTPClientError.self) {
            try await client.send(UserQuery(variables: .init(id: "0")))
        }

        var texts = [String(describing: error), error?.reason ?? "", error.map { "\($0)" } ?? ""]
        texts += error?.graphQLErrors.map(\.message) ?? []
        texts += [error?.decodingFailure?.bodyExcerpt ?? "", error?.transportFailure?.description ?? ""]
        texts += records.withLock { $0 }.map { "\($0)" }
        #expect(!records.withLock { $0 }.isEmpty)
        for text in texts {
            #expect(!text.contains(Self.token), "\(reflection): \(text)")
            #expect(!text.contains(Self.cookie), "\(reflection): \(text)")
        }
        // The redaction says where something was removed.
        #expect(texts.contains { $0.contains("<redacted>") } || reflection == .unauthorized, "\(reflection)")
    }
}

/// GraphQL failure details travel as one payload.
@Suite struct GraphQLFailurePayloadTests {
    @Test func errorsAndPartialDataComeTogether() async throws {
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: StubTransport { _ in
            jsonResponse(#"{"data":{"user":{"name":"Ada","id":1}},"errors":[{"message":"likes unavailable","path":["user","likes"]}]}"#)
        })
        let error = await #expect(throws: HTTPClientError.self) { try await client.send(UserQuery(variables: .init(id: "1"))) }

        let failure = try #require(error?.graphQL)
        #expect(failure.errors.map(\.message) == ["likes unavailable"])
        struct Partial: Decodable { struct Inner: Decodable { let name: String }; let user: Inner }
        #expect(failure.decodePartialData(as: Partial.self)?.user.name == "Ada")
        #expect(HTTPClientError.cancelled().graphQL == nil)
    }
}
