import Foundation
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsSupport
import MomentsHTTP

/// "Cancel every image download, keep the rest."
@Suite struct CancellationGroupTests {
    final class Gate: Sendable {
        let waiting = PThreadMutex<[CheckedContinuation<Void, Never>]>([])
        let isOpen = PThreadMutex(false)

        func pass() async {
            await withCheckedContinuation { continuation in
                let open = isOpen.withLock { $0 }
                if open { continuation.resume() } else { waiting.withLock { $0.append(continuation) } }
            }
        }

        func open() {
            isOpen.withLock { $0 = true }
            waiting.withLock { waiting in
                waiting.forEach { $0.resume() }
                waiting = []
            }
        }
    }

    @Test func cancellingAGroupCancelsItsRequestsAndNoOther() async throws {
        let gate = Gate()
        let transport = StubTransport { request in
            await gate.pass()
            return HTTPResponse(statusCode: 200, body: Data(request.url.path.utf8))
        }
        let client = HTTPClient.patient(baseURL: URL(string: "https://api.example.com")!, transport: transport)
        let images = (0..<3).map { index in
            Task { try await client.send(Endpoint<Data>(.get, "/images/\(index)").options { $0.groups.insert("images") }) }
        }
        let others = (0..<2).map { index in
            Task { try await client.send(Endpoint<Data>(.get, "/timeline/\(index)")) }
        }
        #expect(await withFailsafe { await client.waitUntilRequestsInFlight(are: 5) })
        #expect(client.requestsInFlight(in: "images") == 3)

        client.cancelAll(in: "images")
        for image in images {
            let error = await #expect(throws: HTTPClientError.self) { try await image.value }
            #expect(error?.code == .cancelled)
        }
        #expect(client.requestsInFlight(in: "images") == 0)
        gate.open()
        for (index, other) in others.enumerated() {
            #expect(String(decoding: try await other.value, as: UTF8.self) == "/timeline/\(index)")
        }
        #expect(client.requestsInFlight == 0)
    }
}
