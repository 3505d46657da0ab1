import Foundation
import MomentsCurl
import MomentsNetworking
import MomentsTestSupport
import Testing

/// The transports the conformance suite runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case curl

    var testDescription: String { rawValue }

    func make() throws -> any HTTPTransport {
        switch self {
        case .urlSession: URLSessionTransport()
        case .curl: try CurlTransport()
        }
    }
}

/// A loopback server of `Tools/fixture-server/raw_server.py`, and requests to it.
struct RawServer {
    let server: ScriptServer
    let host: String

    static func start(_ arguments: [String] = []) async throws -> RawServer {
        let server = try await ScriptServer(script: "Tools/fixture-server/raw_server.py", arguments: arguments)
        return RawServer(server: server, host: arguments.contains("--ipv6") ? "[::1]" : "127.0.0.1")
    }

    func url(_ pathAndQuery: String, scheme: String = "http") -> URL {
        URL(string: "\(scheme)://\(host):\(server.port)\(pathAndQuery)")!
    }

    func request(
        _ pathAndQuery: String, method: HTTPMethod = .get, body: Data? = nil, timeout: Duration = .seconds(20),
        limit: Int? = nil, scheme: String = "http"
    ) -> HTTPRequest {
        HTTPRequest(method: method, url: url(pathAndQuery, scheme: scheme), body: body, timeout: timeout, maximumResponseSize: limit)
    }

    func stop() { server.stop() }
}

extension HTTPResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

/// The error a transport threw, as an `HTTPClientError` (or `nil`, recorded as an issue).
func clientError(_ work: () async throws -> HTTPResponse, sourceLocation: SourceLocation = #_sourceLocation) async -> HTTPClientError? {
    do {
        let response = try await work()
        Issue.record("expected a failure, got status \(response.statusCode) with \(response.body.count) bytes", sourceLocation: sourceLocation)
        return nil
    } catch let error as HTTPClientError {
        return error
    } catch {
        Issue.record("expected an HTTPClientError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}
