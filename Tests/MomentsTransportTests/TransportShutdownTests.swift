import Foundation
import MomentsCurl
import MomentsHTTP
import MomentsNetworking
import MomentsTestSupport
import Testing

/// `HTTPTransport.shutdown()` on both transports: what is in flight fails, what comes
/// later fails at once without being sent, and libcurl's thread has ended on return.
@Suite struct TransportShutdownTests {
    @Test(arguments: TransportKind.allCases)
    func aRequestInFlightFailsAndALaterOneIsNotSent(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        // Answered first, so the transport has a connection to the server to close.
        _ = try await transport.send(server.request("/body", method: .post, body: Data("x".utf8)))
        let silence = server.request("/silence", timeout: .seconds(600))
        let silent = Task { try await transport.send(silence) }
        #expect(await eventually { Self.requestsInFlight(transport) == 1 })

        await transport.shutdown()
        let inFlight = await Result(awaiting: { try await silent.value })
        #expect((inFlight.error as? HTTPClientError)?.code == .cancelled, "\(inFlight)")
        let later = await #expect(throws: HTTPClientError.self) { try await transport.send(server.request("/body")) }
        #expect(later?.transportFailure?.kind == .requestNotSent, "\(String(describing: later))")
        #expect(later?.transportFailure?.mayHaveReachedServer == false)
        if let curl = transport as? CurlTransport {
            #expect(curl.hasEnded, "the event loop's thread has ended when shutdown() returns")
            #expect(curl.requestsInFlight == 0)
        }
        await transport.shutdown()  // idempotent
    }

    private static func requestsInFlight(_ transport: any HTTPTransport) -> Int {
        switch transport {
        case let curl as CurlTransport: curl.requestsInFlight
        case let session as URLSessionTransport: session.requestsInFlight
        default: -1
        }
    }
}
