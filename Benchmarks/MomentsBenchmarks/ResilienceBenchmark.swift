import Foundation
import Moments
import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import MomentsHTTP
import MomentsBFF

/// A client against a failing BFF (the reference BFF's fault injection): what an outage
/// costs the server, how fast calls fail while the breaker is open, how soon they
/// succeed once it is back, how far a call overruns its deadline, and what hedging does
/// to a slow tail. The baseline is the same client with the budget, breaker and hedging
/// off (what a client without them does).
enum ResilienceBenchmark {
    static let callers = 64
    static let outage: Duration = Harness.isQuick ? .seconds(3) : .seconds(10)

    /// The client as the README configures it, with or without the fleet's protections.
    static func client(_ bff: ReferenceBFF, protected: Bool, timeout: Duration = .seconds(5)) -> HTTPClient {
        HTTPClient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.retryPolicy = RetryPolicy()
            $0.timeout = timeout
            $0.coalescesRequests = false
            if !protected {
                $0.retryBudget = nil
                $0.circuitBreaker = nil
                $0.hedging = nil
            }
        }
    }

    static func run() async throws -> [Row] {
        var rows: [Row] = []
        rows.append(try await outageRow(refused: false))
        rows += try await openAndRecoveryRows()
        rows.append(try await outageRow(refused: true))
        rows.append(try await deadlineRow())
        rows.append(try await hedgingRow())
        return rows
    }

    /// Calls by `callers` tasks, each calling then pausing 10 ms, for `duration`:
    /// (calls, failures, each failure's latency in ms, first success after `since`).
    static func load(
        _ client: HTTPClient, for duration: Duration, successAfter since: ContinuousClock.Instant? = nil
    ) async -> (calls: Int, latencies: [Double], firstSuccess: ContinuousClock.Instant?) {
        let end = ContinuousClock.now + duration
        return await withTaskGroup(of: (Int, [Double], ContinuousClock.Instant?).self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var calls = 0
                    var latencies: [Double] = []
                    var firstSuccess: ContinuousClock.Instant?
                    while ContinuousClock.now < end {
                        let started = ContinuousClock.now
                        do {
                            _ = try await client.send(GetMomentsByUserID(userID: caller % 2 == 0 ? "0" : "1"))
                            if firstSuccess == nil, let since, started >= since { firstSuccess = ContinuousClock.now }
                        } catch let error as HTTPClientError where error.code == .circuitOpen {
                            latencies.append((ContinuousClock.now - started).seconds * 1_000)
                        } catch {}
                        calls += 1
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                    return (calls, latencies, firstSuccess)
                }
            }
            var total = (calls: 0, latencies: [Double](), firstSuccess: ContinuousClock.Instant?.none)
            for await (calls, latencies, success) in group {
                total.calls += calls
                total.latencies += latencies
                if let success { total.firstSuccess = min(total.firstSuccess ?? success, success) }
            }
            return total
        }
    }

    static func requests(_ bff: ReferenceBFF) async throws -> Int {
        struct Stats: Decodable { let requests: Int }
        let control = HTTPClient(baseURL: bff.baseURL, transport: URLSessionTransport())
        return try await control.send(Endpoint<Stats>(.get, "/__stats")).requests
    }

    /// BFF requests per call while the BFF answers 503 to everything (or refuses
    /// connections) for the outage.
    static func outageRow(refused: Bool) async throws -> Row {
        var perCall: [Double] = []
        for protected in [true, false] {
            let bff = try await ReferenceBFF()
            defer { bff.stop() }
            let client = client(bff, protected: protected)
            _ = try await client.send(GetMomentsByUserID(userID: "0"))
            if refused {
                // Calls that reach nothing: count the connection attempts the client makes
                // (each attempt is one), against a port that refuses.
                await bff.stopAndWait()
                let counter = AttemptCounter()
                let counting = HTTPClient(baseURL: bff.baseURL, transport: counter) {
                    $0.retryPolicy = RetryPolicy()
                    $0.coalescesRequests = false
                    if !protected {
                        $0.retryBudget = nil
                        $0.circuitBreaker = nil
                    }
                }
                let result = await load(counting, for: outage)
                perCall.append(Double(counter.attempts) / Double(max(1, result.calls)))
            } else {
                try await bff.injectFault(["kind": "status", "status": 503, "rate": 1.0])
                let before = try await requests(bff)
                let result = await load(client, for: outage)
                let sent = try await requests(bff) - before
                perCall.append(Double(sent) / Double(max(1, result.calls)))
            }
        }
        return Row(
            name: "outage: BFF requests per call" + (refused ? " (connection refused)" : " (503)"), unit: "requests/call",
            sdk: perCall[0], baseline: perCall[1], ratio: perCall[1] > 0 ? perCall[0] / perCall[1] : nil, target: nil,
            note: "\(callers) callers, \(Int(outage.seconds)) s; baseline: no budget, no breaker", maximum: 1.1
        )
    }

    /// While the breaker is open, failed calls' latency (p99); once the BFF is back, the
    /// seconds until calls succeed.
    static func openAndRecoveryRows() async throws -> [Row] {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let client = client(bff, protected: true)
        _ = try await client.send(GetMomentsByUserID(userID: "0"))
        try await bff.injectFault(["kind": "status", "status": 503, "rate": 1.0])
        let open = await load(client, for: outage)
        let sorted = open.latencies.sorted()
        let p99 = sorted.isEmpty ? .infinity : sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))]
        try await bff.clearFaults()
        let back = ContinuousClock.now
        let recovery = await load(client, for: .seconds(5), successAfter: back)
        let seconds = recovery.firstSuccess.map { ($0 - back).seconds } ?? .infinity
        let probe = (client.configuration.circuitBreaker?.openDuration ?? .zero).seconds
        return [
            Row(name: "outage: failed call latency while open (ms, p99)", unit: "ms", sdk: p99, target: nil,
                note: "\(sorted.count) calls failed at the breaker", maximum: 1),
            Row(name: "recovery: seconds until calls succeed after the BFF returns", unit: "s", sdk: seconds, target: nil,
                note: String(format: "probe interval %.1f s", probe), maximum: probe + 1),
        ]
    }

    /// The worst overrun past the call's deadline: a BFF answering 503 with
    /// `Retry-After: 1`, and one that stalls, against a 1.5 s deadline.
    static func deadlineRow() async throws -> Row {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let timeout = Duration.milliseconds(1_500)
        let client = HTTPClient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.retryPolicy = RetryPolicy(maximumAttempts: 5)
            $0.timeout = timeout
            $0.circuitBreaker = nil
            $0.coalescesRequests = false
        }
        var worst = 0.0
        for fault: [String: any Sendable] in [["kind": "status", "status": 503, "retryAfter": "1", "rate": 1.0], ["kind": "slow", "seconds": 5, "rate": 1.0]] {
            try await bff.injectFault(fault)
            for _ in 0..<(Harness.isQuick ? 3 : 10) {
                let started = ContinuousClock.now
                _ = try? await client.send(GetMomentsByUserID(userID: "0"))
                worst = max(worst, ((ContinuousClock.now - started) - timeout).seconds * 1_000)
            }
            try await bff.clearFaults()
        }
        return Row(name: "deadline: worst overrun past timeout (ms)", unit: "ms", sdk: max(0, worst), target: nil,
                   note: "1.5 s deadline, 503 with Retry-After: 1, and a 5 s stall", maximum: 50)
    }

    /// p99 latency with 5% of answers 1 s late, hedged against not, and the extra
    /// requests hedging cost.
    static func hedgingRow() async throws -> Row {
        var p99: [Double] = []
        var extra = 0.0
        for hedged in [true, false] {
            let bff = try await ReferenceBFF()
            defer { bff.stop() }
            let client = HTTPClient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
                $0.coalescesRequests = false
                $0.hedging = hedged ? HedgingPolicy() : nil
            }
            // Warm the latency tracker on a healthy BFF.
            for _ in 0..<50 { _ = try await client.send(GetMomentsByUserID(userID: "0")) }
            try await bff.injectFault(["kind": "slow", "seconds": 1, "rate": 0.05, "seed": 7])
            let before = try await requests(bff)
            let calls = Harness.isQuick ? 200 : 600
            var latencies: [Double] = []
            await withTaskGroup(of: Double.self) { group in
                for index in 0..<calls {
                    group.addTask {
                        let started = ContinuousClock.now
                        _ = try? await client.send(GetMomentsByUserID(userID: index % 2 == 0 ? "0" : "1"))
                        return (ContinuousClock.now - started).seconds * 1_000
                    }
                    if index % 8 == 7 { for await latency in group.prefix(8) { latencies.append(latency) } }
                }
                for await latency in group { latencies.append(latency) }
            }
            let sent = try await requests(bff) - before
            if hedged { extra = Double(sent - calls) / Double(calls) }
            let sorted = latencies.sorted()
            p99.append(sorted[min(sorted.count - 1, Int(Double(sorted.count) * 0.99))])
        }
        return Row(
            name: "hedging: p99 with 5% of answers 1 s late, hedged vs not", unit: "× faster", sdk: p99[1] / max(p99[0], 0.001),
            baseline: 1, ratio: p99[1] / max(p99[0], 0.001), target: 5,
            note: String(format: "p99 %.0f ms hedged, %.0f ms not; %.1f%% extra requests", p99[0], p99[1], extra * 100)
        )
    }
}

/// A transport that counts attempts and refuses them all, as a BFF that is down does.
final class AttemptCounter: HTTPTransport {
    private let count = PThreadMutex(0)
    var attempts: Int { count.withLock { $0 } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        count.withLock { $0 += 1 }
        throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionRefused, message: "Connection refused"))
    }
}
