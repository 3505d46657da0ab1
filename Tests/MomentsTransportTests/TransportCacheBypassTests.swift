import Foundation
import MomentsHTTP
import MomentsNetworking
import MomentsTestSupport
import Testing

/// Neither transport keeps a cache of its own: an answer marked cacheable for an hour
/// is asked for again on every request (caching is the client's, under its policies).
@Suite struct TransportCacheBypassTests {
    private struct Answer: Decodable { let id: Int }

    @Test(arguments: TransportKind.allCases)
    func everyRequestReachesTheServerWhateverTheAnswerSaysAboutCaching(kind: TransportKind) async throws {
        let server = try await RawServer.start()
        defer { server.stop() }
        let transport = try kind.make()
        let path = "/cacheable?key=\(UUID().uuidString)"
        var served: [Int] = []
        for _ in 0..<3 {
            let response = try await transport.send(server.request(path))
            #expect(response.statusCode == 200)
            #expect(response.headers["Cache-Control"] == "public, max-age=3600")
            served.append(try JSONDecoder().decode(Answer.self, from: response.body).id)
        }
        #expect(served == [1, 2, 3], "each request was answered by the server")
    }
}
