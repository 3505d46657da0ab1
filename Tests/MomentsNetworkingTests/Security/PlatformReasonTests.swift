import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// Transport failures keep what the platform said, and are classified by it.
@Suite struct PlatformReasonTests {
    @Test func aSelfSignedCertificateIsASecureConnectionFailureSayingSo() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py", arguments: ["--tls"])
        defer { server.stop() }
        let url = try #require(URL(string: "https://127.0.0.1:\(server.port)"))
        // The handshake fails as soon as the server answers it: the deadline only bounds a
        // hang (a Python TLS server beside two compilers took more than 10 s to answer).
        let client = HTTPClient.patient(baseURL: url) { $0.timeout = .seconds(120) }

        let error = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/json")) }

        #expect(error?.transportFailure?.kind == .secureConnectionFailed, "\(String(describing: error))")
        #expect(error?.transportFailure?.message.lowercased().contains("certificate") == true, "\(String(describing: error))")
        #expect(error?.underlyingError != nil)
    }

    /// A compressed answer arrives decoded: shorter or longer than its Content-Length,
    /// it is whole either way.
    @Test(arguments: [("a", 1), ("z9", 5_000)])
    func aCompressedAnswerIsNeverTakenForATruncatedOne(text: String, repeats: Int) async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.baseURL)
        let body = try await client.send(Endpoint<Data>(.get, "/gzip").query("text", text).query("repeat", String(repeats)))
        #expect(body == Data(String(repeating: text, count: repeats).utf8))
    }

    @Test func aBodyCutMidTransferAndARefusedConnectionSayWhy() async throws {
        let server = try await ScriptServer(script: "Tools/fixture-server/fixture_server.py")
        defer { server.stop() }
        // The server cuts the body as soon as it runs: the deadline only bounds a hang,
        // and a busy machine may take many seconds to schedule a Python server.
        let client = HTTPClient.patient(baseURL: server.baseURL) { $0.timeout = .seconds(120) }
        let cut = await #expect(throws: HTTPClientError.self) { try await client.send(Endpoint<Data>(.get, "/truncated")) }
        #expect(cut?.transportFailure?.kind == .truncatedResponse, "\(String(describing: cut))")

        let refused = HTTPClient.patient(baseURL: URL(string: "http://127.0.0.1:\(refusedLoopbackPort())")!)
        let error = await #expect(throws: HTTPClientError.self) { try await refused.send(Endpoint<Data>(.get, "/json")) }
        #expect(error?.transportFailure?.kind == .connectionRefused)
        let message = error?.transportFailure?.message.lowercased() ?? ""
        #expect(message.contains("connect") && message.contains("urlerror -1004"), "\(message)")
    }
}
