import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moments
import MomentsCurl
import MomentsCurlBaseline
import MomentsNetworking
import MomentsSupport
import MomentsHTTP
import MomentsBFF

/// `CurlTransport` against a plain C program on libcurl's multi interface (the
/// baseline), and the service over each transport, against the same nginx serving the
/// 4-moment and the 1,000-moment answers; plus the SDK's own cost per request over a
/// transport that answers at once.
enum CurlBenchmark {
    static func run() async throws -> [Row] {
        let small = BenchmarkData.envelope(BenchmarkData.timeline(moments: 4))
        let large = BenchmarkData.envelope(BenchmarkData.timeline(moments: 1_000))
        let server = try NginxServer(answers: ["/graphql": small, "/graphql-large": large])
        defer { server.stop() }
        var rows: [Row] = []

        var configuration = CurlTransport.Configuration()
        configuration.maximumConnectionsPerHost = 64  // as many as the baseline keeps in flight
        let curl = try CurlTransport(configuration: configuration)
        let probe = HTTPClient(baseURL: server.baseURL, transport: curl)
        let body = try probe.makeHTTPRequest(for: GetMomentsByUserID(userID: "0")).body ?? Data()
        let bodyText = String(decoding: body, as: UTF8.self)

        for (label, path, size) in [("4 moments", "/graphql", small.count), ("1,000 moments", "/graphql-large", large.count)] {
            let url = server.baseURL.appendingPathComponent(String(path.dropFirst()))
            // The query, repeatable as the client sends it (a request that is not repeatable
            // goes on a fresh connection each time).
            let request = HTTPRequest(method: .post, url: url, headers: ["Content-Type": "application/json"], body: body, timeout: .seconds(10),
                                      isRepeatable: true)
            _ = try await curl.send(request)
            for width in [1, 64] {
                let pair = try await Harness.compare(
                    sdk: { try await HTTPBenchmark.concurrently(width) { _ = try await curl.send(request) } },
                    baseline: { baseline(url: url, body: bodyText, width: width) }
                )
                rows.append(Harness.row("curl: CurlTransport, \(label) (\(size / 1024) KiB), \(widthLabel(width))", unit: "req/s", pair,
                                        target: 0.8, note: "baseline: C on libcurl multi"))
            }
        }

        let graphQLURL = server.baseURL.appendingPathComponent("graphql")
        let overCurl = GraphQLMomentsService(client: HTTPClient(baseURL: server.baseURL, transport: curl) { $0.coalescesRequests = false })
        let overURLSession = GraphQLMomentsService(
            client: HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport()) { $0.coalescesRequests = false }
        )
        _ = try await overCurl.getMoments(userID: "0")
        _ = try await overURLSession.getMoments(userID: "0")
        for width in [1, 64] {
            let pair = try await Harness.compare(
                sdk: { try await HTTPBenchmark.concurrently(width) { _ = try await overCurl.getMoments(userID: "0") } },
                baseline: { baseline(url: graphQLURL, body: bodyText, width: width) }
            )
            rows.append(Harness.row("curl: getMoments over curl, \(widthLabel(width))", unit: "req/s", pair, target: 0.5,
                                    note: "baseline: C on libcurl multi"))
        }
        let versus = try await Harness.compare(
            sdk: { try await HTTPBenchmark.concurrently(64) { _ = try await overCurl.getMoments(userID: "0") } },
            baseline: { try await HTTPBenchmark.concurrently(64) { _ = try await overURLSession.getMoments(userID: "0") } }
        )
        rows.append(Harness.row("curl: getMoments over curl vs over URLSession, 64 concurrent", unit: "req/s", versus, target: 8,
                                note: "baseline: the same call over URLSessionTransport"))
        let urlSessionAlone = try await Harness.compare(
            sdk: { try await HTTPBenchmark.concurrently(64) { _ = try await overURLSession.getMoments(userID: "0") } },
            baseline: { baseline(url: graphQLURL, body: bodyText, width: 64) }
        )
        rows.append(Harness.row("curl: getMoments over URLSession, 64 concurrent", unit: "req/s", urlSessionAlone, target: nil,
                                note: "baseline: C on libcurl multi"))

        rows.append(try await sdkCostPerRequest(answer: small))
        return rows
    }

    /// The SDK's own work for one `getMoments` (building, encoding, the client's
    /// pipeline, decoding) over a transport that answers at once.
    static func sdkCostPerRequest(answer: Data) async throws -> Row {
        let instant = InstantTransport(response: HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: answer))
        let service = GraphQLMomentsService(
            client: HTTPClient(baseURL: URL(string: "http://127.0.0.1:1")!, transport: instant) {
                $0.coalescesRequests = false
                // What hedging costs a call: the same calls with it off (profiling only).
                if ProcessInfo.processInfo.environment["NOHEDGE"] == "1" { $0.hedging = nil }
            }
        )
        _ = try await service.getMoments(userID: "0")
        if let calls = ProcessInfo.processInfo.environment["MOMENTS_BENCH_CALLS"].flatMap(Int.init) {
            // A fixed number of calls, for counters read from outside (CPU time, allocations,
            // tasks: `perf stat`), divided by it; `WIDTH=N` makes them N at a time.
            let width = ProcessInfo.processInfo.environment["WIDTH"].flatMap(Int.init) ?? 1
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<width {
                    let share = calls / width + (index < calls % width ? 1 : 0)
                    group.addTask { for _ in 0..<share { _ = try await service.getMoments(userID: "0") } }
                }
                try await group.waitForAll()
            }
            return Row(name: "curl: SDK cost of getMoments, \(calls) calls", unit: "calls", sdk: Double(calls))
        }
        var rates: [Double] = []
        for _ in 0..<Harness.rounds {
            rates.append(try await Harness.rate(for: Harness.roundDuration) { _ = try await service.getMoments(userID: "0"); return 1 })
        }
        let microseconds = 1e6 / Harness.median(rates)
        return Row(name: "curl: SDK cost of getMoments (4 moments, instant transport)", unit: "µs per request", sdk: microseconds,
                   note: "target ≤ 8 µs\(microseconds <= 8 ? " ✓" : " ✗"), decoding included")
    }

    /// Runs only `CurlTransport.send`, `width` at a time, for `seconds`, for a profiler to watch.
    static func profile(seconds: Int, width: Int, moments: Int) async throws -> [Row] {
        let server = try NginxServer(answers: ["/graphql": BenchmarkData.envelope(BenchmarkData.timeline(moments: moments))])
        defer { server.stop() }
        var configuration = CurlTransport.Configuration()
        configuration.maximumConnectionsPerHost = 64
        if ProcessInfo.processInfo.environment["NOENC"] == "1" { configuration.acceptsCompressedResponses = false }
        let curl = try CurlTransport(configuration: configuration)
        let request = HTTPRequest(method: .post, url: server.baseURL.appendingPathComponent("graphql"),
                                  headers: ["Content-Type": "application/json"], body: Data("{}".utf8), timeout: .seconds(10), isRepeatable: true)
        var rate = 0.0
        if ProcessInfo.processInfo.environment["BASELINE"] == "1" {
            // The C baseline alone, for the same time, to compare profiles with.
            rate = baseline(url: request.url, body: "{}", width: width, seconds: Double(seconds))
            return [Row(name: "profile: C baseline, \(width) at a time, \(moments) moments", unit: "req/s", sdk: rate)]
        }
        let end = ContinuousClock.now + .seconds(seconds)
        if ProcessInfo.processInfo.environment["SERVICE"] == "1" {
            // `getMoments` over the same transport.
            let service = GraphQLMomentsService(client: HTTPClient(baseURL: server.baseURL, transport: curl) {
                $0.coalescesRequests = false
                // What hedging costs a call: the same calls with it off.
                if ProcessInfo.processInfo.environment["NOHEDGE"] == "1" { $0.hedging = nil }
            })
            while ContinuousClock.now < end {
                rate = try await HTTPBenchmark.concurrently(width) { _ = try await service.getMoments(userID: "0") }
            }
            return [Row(name: "profile: getMoments over curl, \(width) at a time, \(moments) moments", unit: "req/s", sdk: rate)]
        }
        while ContinuousClock.now < end {
            rate = try await HTTPBenchmark.concurrently(width) { _ = try await curl.send(request) }
        }
        return [Row(name: "profile: CurlTransport.send, \(width) at a time, \(moments) moments", unit: "req/s", sdk: rate)]
    }

    static func widthLabel(_ width: Int) -> String { width == 1 ? "1 at a time" : "\(width) concurrent" }

    /// The C baseline's rate, run on a thread of its own (it blocks while it runs).
    static func baseline(url: URL, body: String, width: Int, seconds: Double = Harness.roundDuration.seconds) -> Double {
        url.absoluteString.withCString { url in
            body.withCString { text in
                moments_curl_baseline_rate(url, text, body.utf8.count, Int32(width), seconds)
            }
        }
    }
}

/// Answers every request at once with the same response, keeping nothing.
struct InstantTransport: HTTPTransport {
    let response: HTTPResponse
    func send(_ request: HTTPRequest) async throws -> HTTPResponse { response }
}

/// `CurlTransport` under a long run with faults: `total` requests, 64 in flight, about
/// 5% of them faulty (the server closing without an answer, a 404, a deadline too short
/// to meet, a caller cancelling). Every request must end in exactly one accounted
/// outcome; descriptors and memory must come back.
enum CurlSoak {
    static func run(total: Int) async throws -> [Row] {
        let server = try NginxServer(
            answers: ["/graphql": BenchmarkData.envelope(BenchmarkData.timeline(moments: 4)),
                      "/graphql-large": BenchmarkData.envelope(BenchmarkData.timeline(moments: 1_000))],
            extraLocations: ["        location = /close { return 444; }"]
        )
        defer { server.stop() }
        var configuration = CurlTransport.Configuration()
        configuration.maximumConnectionsPerHost = 64
        let transport = try CurlTransport(configuration: configuration)
        let base = server.baseURL
        let descriptorsBefore = openDescriptors()
        let residentBefore = currentResidentBytes()
        let started = ContinuousClock.now
        let counts = try await withThrowingTaskGroup(of: [String: Int].self) { group in
            for worker in 0..<64 {
                group.addTask {
                    var counts: [String: Int] = [:]
                    var index = worker
                    while index < total {
                        let outcome = await oneRequest(index, base: base, transport: transport)
                        counts[outcome, default: 0] += 1
                        index += 64
                    }
                    return counts
                }
            }
            return try await group.reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
        }
        let elapsed = (ContinuousClock.now - started).seconds
        while transport.requestsInFlight > 0 { try await Task.sleep(for: .milliseconds(10)) }
        let accounted = counts.values.reduce(0, +)
        var rows = [
            Row(name: "soak: requests accounted for", unit: "of \(total)", sdk: Double(accounted),
                note: accounted == total ? "all ✓" : "MISSING \(total - accounted) ✗"),
            Row(name: "soak: rate with faults, 64 in flight", unit: "req/s", sdk: Double(total) / elapsed),
        ]
        for (outcome, count) in counts.sorted(by: { $0.key < $1.key }) {
            rows.append(Row(name: "soak: outcome \(outcome)", unit: "requests", sdk: Double(count)))
        }
        rows.append(Row(name: "soak: open descriptors before / after", unit: "fds", sdk: Double(openDescriptors()),
                        baseline: Double(descriptorsBefore), note: "after ≤ before + 64 connections"))
        rows.append(Row(name: "soak: RSS after / before", unit: "MiB", sdk: Double(currentResidentBytes()) / 1_048_576,
                        baseline: Double(residentBefore) / 1_048_576, note: "peak \(peakResidentBytes() / 1_048_576) MiB"))
        return rows
    }

    /// One request of the mix; returns its outcome's name.
    static func oneRequest(_ index: Int, base: URL, transport: CurlTransport) async -> String {
        var path = "graphql"
        var timeout = Duration.seconds(10)
        var cancels = false
        switch index % 80 {
        case 0: path = "close"             // the server closes without answering
        case 1: path = "missing"           // 404
        case 2: path = "graphql-large"; timeout = .microseconds(200)  // a deadline too short
        case 3: cancels = true             // the caller gives up
        default: break
        }
        let request = HTTPRequest(method: .post, url: base.appendingPathComponent(path),
                                  headers: ["Content-Type": "application/json"], body: Data("{}".utf8), timeout: timeout, isRepeatable: true)
        let task = Task { try await transport.send(request) }
        if cancels { task.cancel() }
        switch await task.result {
        case .success(let response): return "status \(response.statusCode)"
        case .failure(let error as HTTPClientError):
            if let failure = error.transportFailure { return "transport failure: \(failure.kind)" }
            return "\(error.code)"
        case .failure(let error): return "unexpected \(type(of: error))"
        }
    }

    static func openDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}
