import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsBFF

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
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(10) }
        let service = GraphQLMomentsService(client: client)
        let store = MomentsStore(service: service, persistence: InMemoryPersistence())
        try await store.refresh(userID: "0")
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        var wrong: [String] = []
        var cancelled = 0
        for round in 0..<60 {
            // Every tenth call starts only once cancelled, so some surely are.
            let startsCancelled = round % 10 == 0
            let call = Task { () async throws -> Void in
                while startsCancelled, !Task.isCancelled { await Task.yield() }
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
        #expect(cancelled >= 6, "seed \(seed): only \(cancelled) calls were cancelled")
        await store.waitUntilIdle()
    }

    /// A call made by a task already cancelled never reaches the server's answer: it
    /// throws the layer's error, whether or not the request hedges.
    @Test(arguments: [Layer.client, .service])
    func aCallFromACancelledTaskThrowsTheLayersError(layer: Layer) async throws {
        let bff = try await ReferenceBFF(users: 4)
        defer { bff.stop() }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport())
        let service = GraphQLMomentsService(client: client)
        for _ in 0..<25 { _ = try await service.getMoments(userID: "user-1") }   // enough latency samples to hedge
        let call = Task { () async throws -> Void in
            while !Task.isCancelled { await Task.yield() }
            switch layer {
            case .client: _ = try await client.send(GetMomentsByUserID(userID: "user-1"))
            default: _ = try await service.getMoments(userID: "user-1")
            }
        }
        call.cancel()
        let error = await #expect(throws: HTTPClientError.self) { try await call.value }
        #expect(error?.code == .cancelled)
    }
}
