import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP

/// A mutation happens at most once unless the caller said otherwise: a request that is
/// not repeatable goes on a connection nothing can make the transport send it on again,
/// and after a failure that may have reached the server the client reports that it may
/// have been processed instead of sending it again. Attacked from outside, through both
/// transports, by a server that reads the whole request and then closes (with FIN, and
/// with RST) without answering.
@Suite struct OnceOnlyDeliveryTests {
    private static let body = Data(#"{"query":"mutation { transfer(amount: 100) { id } }"}"#.utf8)

    private func delivered(_ key: String, on server: RawServer, through transport: any HTTPTransport) async throws -> Int {
        Int(try await transport.send(server.request("/swallowed?key=\(key)")).text) ?? -1
    }

    @Test(arguments: TransportKind.allCases, [false, true])
    func aMutationTheServerReadAndDroppedIsNotSentAgain(kind: TransportKind, reset: Bool) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let observer = try kind.make()
        let policies: [RetryPolicy?] = [nil, RetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), jitter: 0)]
        for (index, policy) in policies.enumerated() {
            let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make()) { $0.retryPolicy = policy }
            for method in [HTTPMethod.post, .patch] {
                let key = "\(method)-\(index)-\(reset)"
                // A kept-alive connection first: the one a transport would reuse.
                _ = try await client.send(Endpoint<Data>(.get, "/json"))
                let mutation = Endpoint<Data>(method, "/swallow").query("key", key).query("rst", reset ? "1" : "0")
                    .body(.data(Self.body, contentType: "application/json"))
                let error = await #expect(throws: HTTPClientError.self) { try await client.send(mutation) }
                #expect(error?.code == .transportFailure, "\(key): \(String(describing: error))")
                #expect(error?.retriesStopped == .mayHaveBeenProcessed, "\(key): \(String(describing: error))")
                #expect(error?.description.contains("may have processed") == true, "\(key): \(String(describing: error))")
                #expect(try await delivered(key, on: server, through: observer) == 1, "\(key): the server read it once, and only once")
            }
        }
    }

    /// The transport alone keeps the rule too: it never sends a request that is not
    /// repeatable a second time by itself.
    @Test(arguments: TransportKind.allCases)
    func theTransportNeverSendsAMutationTwiceByItself(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        for round in 0..<5 {
            #expect(try await transport.send(server.request("/json")).statusCode == 200)
            let key = "transport-\(round)"
            await #expect(throws: HTTPClientError.self) {
                try await transport.send(server.request("/swallow?key=\(key)", method: .post, body: Self.body))
            }
            #expect(try await delivered(key, on: server, through: transport) == 1, "round \(round)")
        }
    }

    /// A request declared repeatable is sent again after the same failure: the rule is
    /// about what the caller declared, not about the method alone.
    @Test(arguments: TransportKind.allCases)
    func aRequestDeclaredRepeatableIsSentAgain(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make())
        _ = try await client.send(Endpoint<Data>(.get, "/json"))
        let request = Endpoint<Data>(.post, "/swallow").query("key", "declared").body(.data(Self.body, contentType: "application/json"))
            .options { $0.allowsRetry = true }
        await #expect(throws: HTTPClientError.self) { try await client.send(request) }
        #expect(try await delivered("declared", on: server, through: try kind.make()) >= 2)
    }

    /// A mutation sent after the server arranged to drop the next request of a used
    /// connection goes on a fresh connection: the server answers it. (Had it ridden the
    /// used connection, it would have been dropped, and the call would have failed
    /// saying it may have been processed.)
    @Test(arguments: TransportKind.allCases)
    func aMutationNeverRidesAConnectionTheServerIsClosing(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let client = HTTPClient.patient(baseURL: server.url("/"), transport: try kind.make())
        for closing in ["headers", "body", "nothing"] {
            _ = try await client.send(Endpoint<Data>(.get, "/close-next").query("after", closing))
            let answer = try await client.send(Endpoint<Data>(.post, "/echo").body(.data(Self.body, contentType: "application/json")))
            #expect(String(decoding: answer, as: UTF8.self).contains("transfer(amount: 100)"), "\(closing)")
        }
    }
}
