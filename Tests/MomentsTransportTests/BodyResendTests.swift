import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsBFF

/// A request sent again on a new connection (the server closed the kept-alive one the
/// moment the request arrived: an idle timeout racing it) carries its whole body, or
/// fails with a typed error: never a `Content-Length` it does not fill.
@Suite struct BodyResendTests {
    enum BodyKind: String, CaseIterable, CustomTestStringConvertible {
        case small, large, streamed
        var testDescription: String { rawValue }
    }

    struct Received: Decodable {
        let declared: Int
        let received: Int
        let body: String?
    }

    @Test(arguments: TransportKind.allCases, BodyKind.allCases)
    func aPostSentAgainOnANewConnectionCarriesItsWholeBody(kind: TransportKind, body bodyKind: BodyKind) async throws {
        for closing in ["headers", "body", "nothing"] {
            try await sendAfterTheServerDrops(kind: kind, body: bodyKind, closingAfter: closing)
        }
    }

    private func sendAfterTheServerDrops(kind: TransportKind, body bodyKind: BodyKind, closingAfter closing: String) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let observer = try kind.make()
        let text = bodyKind == .small
            ? #"{"query":"mutation UpdateMomentLike($momentID: ID!) { updateMomentLike(momentID: $momentID) { id } }","variables":{"momentID":"2"}}"#
            : String(repeating: "0123456789abcdef", count: 64 * 1024)
        let bytes = Data(text.utf8)
        for round in 0..<3 {
            // The next request on a used connection is dropped unanswered as it arrives:
            // armed by this connection's last request, or by another one (so the request
            // goes to the same URL as the one before it).
            if round == 1 {
                #expect(try await observer.send(server.request("/arm-close?after=\(closing)")).text == "armed")
            } else {
                #expect(try await transport.send(server.request("/close-next?after=\(closing)")).text == "armed")
            }
            var request = server.request("/body", method: .post, timeout: .seconds(10))
            // Repeatable, so the transport may reuse the connection (and send it again).
            request.isRepeatable = true
            if bodyKind == .streamed {
                let file = FileManager.default.temporaryDirectory.appendingPathComponent("resend-\(UUID().uuidString)")
                try bytes.write(to: file)
                defer { try? FileManager.default.removeItem(at: file) }
                request.streamedBody = StreamedBody([try StreamedBody.file(file)])
                try await check(transport, request, bytes, label: "\(closing), round \(round)")
            } else {
                request.body = bytes
                try await check(transport, request, bytes, label: "\(closing), round \(round)")
            }
        }
        // The server did drop requests as they arrived: the resends were needed.
        let dropped = Int(try await transport.send(server.request("/closed-early")).text) ?? -1
        #expect((1...3).contains(dropped), "\(dropped)")
    }

    private func check(_ transport: any HTTPTransport, _ request: HTTPRequest, _ bytes: Data, label: String) async throws {
        do {
            let response = try await transport.send(request)
            let received = try JSONDecoder().decode(Received.self, from: response.body)
            #expect(response.statusCode == 200, "\(label): \(response.text.prefix(200))")
            #expect(received.declared == bytes.count && received.received == bytes.count, "\(label)")
            #expect(received.body.map { Data($0.utf8) } == bytes, "\(label): \(received.body?.prefix(80) ?? "")")
        } catch let error as HTTPClientError {
            // A transport that cannot send the body again fails the attempt as a reset
            // connection (the client sends a repeatable request again); never a short body.
            #expect(error.transportFailure?.kind == .connectionReset, "\(label): \(error)")
        }
    }
}
