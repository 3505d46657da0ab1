import Foundation
import MomentsCurl
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// The transports the conformance suite runs against.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case urlSession
    case curl

    var testDescription: String { rawValue }

    /// A transport of this kind; with `maximumConnectionsPerHost`, that many connections
    /// to one host and no more.
    func make(maximumConnectionsPerHost: Int? = nil) throws -> any HTTPTransport {
        switch self {
        case .urlSession:
            var configuration = URLSessionTransport.Configuration()
            if let maximumConnectionsPerHost { configuration.maximumConnectionsPerHost = maximumConnectionsPerHost }
            return URLSessionTransport(configuration: configuration)
        case .curl:
            var configuration = CurlTransport.Configuration()
            if let maximumConnectionsPerHost { configuration.maximumConnectionsPerHost = maximumConnectionsPerHost }
            return try CurlTransport(configuration: configuration)
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
