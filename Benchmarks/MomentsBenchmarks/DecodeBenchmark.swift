import Foundation
import Moments
import MomentsNetworking
import MomentsHTTP
import MomentsBFF

/// Decoding a 1,000-moment timeline through the GraphQL envelope, against a plain
/// `JSONDecoder().decode` of the same bytes into the same models.
enum DecodeBenchmark {
    static func run() async -> [Row] {
        let body = BenchmarkData.envelope(BenchmarkData.timeline(moments: 1_000))
        let response = HTTPResponse(statusCode: 200, body: body)
        let operation = GetMomentsByUserID(userID: "0")
        let megabytes = Double(body.count) / 1_048_576
        let decoder = JSONDecoder()
        if let calls = ProcessInfo.processInfo.environment["MOMENTS_BENCH_CALLS"].flatMap(Int.init) {
            // A fixed number of decodes, for counters read from outside (`perf stat`).
            for _ in 0..<calls { _ = try? operation.decodeResponse(response, decoder: decoder) }
            return [Row(name: "decode 1,000-moment timeline, \(calls) calls", unit: "calls", sdk: Double(calls))]
        }
        let pair = await Harness.compare(
            sdk: {
                await Harness.rate(for: Harness.roundDuration) {
                    _ = try? operation.decodeResponse(response, decoder: decoder)
                    return 1
                } * megabytes
            },
            baseline: {
                await Harness.rate(for: Harness.roundDuration) {
                    _ = try? decoder.decode(PlainEnvelope.self, from: body)
                    return 1
                } * megabytes
            }
        )
        return [Harness.row("decode 1,000-moment timeline (\(body.count / 1024) KiB)", unit: "MB/s", pair, target: 0.95)]
    }

    /// The fast reader alone on the 1,000-moment answer (or `MOMENTS`) for `seconds`, for a profiler to
    /// watch; reports its rate.
    static func profile(seconds: Int) -> [Row] {
        // `MOMENTS=N` decodes an answer of N moments instead.
        let size = ProcessInfo.processInfo.environment["MOMENTS"].flatMap(Int.init) ?? 1_000
        let body = BenchmarkData.envelope(BenchmarkData.timeline(moments: size))
        // The moments read, so that the decoding is not optimised away.
        let decode = { TimelineFastDecoding.decode(body, field: "getMomentsDetailsByUserID")?.moments.count ?? 0 }
        if let count = ProcessInfo.processInfo.environment["DECODES"].flatMap(Int.init) {
            // A fixed number of decodes, for counters read from outside (`valgrind`).
            let moments = (0..<count).reduce(0) { read, _ in read + decode() }
            return [Row(name: "profile: fast reader, \(count) decodes of \(size) moments (\(moments) read)", unit: "decodes", sdk: Double(count))]
        }
        let end = ContinuousClock.now + .seconds(seconds)
        var decodes = 0
        var moments = 0
        let start = ContinuousClock.now
        while ContinuousClock.now < end {
            for _ in 0..<10 { moments += decode() }
            decodes += 10
        }
        let elapsed = (ContinuousClock.now - start) / .seconds(1)
        let megabytes = Double(body.count) * Double(decodes) / 1_048_576
        return [Row(name: "profile: fast reader, \(size) moments (\(moments / max(decodes, 1)) read)", unit: "MB/s", sdk: megabytes / elapsed)]
    }
}
