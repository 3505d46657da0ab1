import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing

/// Cancellation throws one documented error at every layer, wherever it lands: before
/// the request, while it waits for the network, while the answer is decoded, applied or
/// persisted. `HTTPClient` and `GraphQLMomentsService` throw ``HTTPClientError`` with
/// code `.cancelled`; `MomentsStore` throws `CancellationError`.
@Suite(.serialized) struct CancellationContractTests {
    enum Layer: String, CaseIterable, CustomTestStringConvertible {
        case client, service, storeRefresh, storeLike
        var testDescription: String { rawValue }
    }

    @Test(arguments: Layer.allCases)
    func aCancelledCallThrowsTheLayersOneError(layer: Layer) async throws {
        let bff = try await ReferenceBFF(users: 4)
        defer { bff.stop() }
        let client = HTTPClient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(10) }
        let service = GraphQLMomentsService(client: client)
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        try await store.refresh(userID: "0")
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        var wrong: [String] = []
        var cancelled = 0
        for round in 0..<60 {
            let call = Task { () async throws -> Void in
                switch layer {
                case .client: _ = try await client.send(GetMomentsByUserID(userID: "user-\(round % 4 + 1)"))
                case .service: _ = try await service.getMoments(userID: "user-\(round % 4 + 1)")
                case .storeRefresh: _ = try await store.refresh(userID: round % 2 == 0 ? "0" : "user-\(round % 4 + 1)")
                case .storeLike: _ = try await store.setLike(round % 2 == 0, momentID: "\(round % 4)", userID: "0")
                }
            }
            // Cancelled anywhere from at once to 40 ms in (a seeded exploration of where
            // the cancellation lands; the rule holds wherever it does).
            let delay = Int.random(in: 0...40_000, using: &generator)
            if delay > 1_000 { try await Task.sleep(for: .microseconds(delay)) }
            call.cancel()
            switch await call.result {
            case .success: break
            case .failure(let error):
                cancelled += 1
                let isDocumented = switch layer {
                case .client, .service: (error as? HTTPClientError)?.code == .cancelled
                case .storeRefresh, .storeLike: error is CancellationError
                }
                if !isDocumented { wrong.append("round \(round): \(type(of: error)) \(error)") }
            }
        }
        #expect(wrong.isEmpty, "seed \(seed): \(wrong.prefix(5))")
        #expect(cancelled > 0, "seed \(seed): no call was cancelled")
        await store.waitUntilIdle()
    }
}
