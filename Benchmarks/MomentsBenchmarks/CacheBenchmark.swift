import Foundation
import Moments
import MomentsNetworking
import MomentsCaching
import MomentsBFF

/// A `.localOrRemote` cache hit through `HTTPClient.send`, beside a dictionary lookup and
/// a decode of the same bytes.
enum CacheBenchmark {
    static func run() async throws -> [Row] {
        let body = BenchmarkData.envelope(BenchmarkData.timeline(moments: 4))
        let client = HTTPClient(baseURL: URL(string: "http://bff.invalid")!, transport: StubTransport(statusCode: 200, body: body)) {
            $0.cache = MemoryResponseCache()
            $0.cachePolicy = .localOrRemote
        }
        let request = GetMomentsByUserID(userID: "0")
        _ = try await client.send(request)  // fills the cache
        let dictionary = [CacheKey(try client.makeHTTPRequest(for: request)): body]
        let key = CacheKey(try client.makeHTTPRequest(for: request))
        let decoder = JSONDecoder()
        let pair = try await Harness.compare(
            sdk: { try await Harness.rate(for: Harness.roundDuration) { _ = try await client.send(request); return 1 } },
            baseline: {
                await Harness.rate(for: Harness.roundDuration) {
                    if let bytes = dictionary[key] { _ = try? decoder.decode(PlainEnvelope.self, from: bytes) }
                    return 1
                }
            }
        )
        return [Row(name: "cache hit (.localOrRemote), 4-moment answer", unit: "µs/hit", sdk: 1e6 / pair.sdk,
                    baseline: 1e6 / pair.baseline, ratio: pair.ratio, target: nil,
                    note: "report only; ratio is throughput SDK/baseline", sdkCPU: pair.sdkCPU, baselineCPU: pair.baselineCPU)]
    }
}
