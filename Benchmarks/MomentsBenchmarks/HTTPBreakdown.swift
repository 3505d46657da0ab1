import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Moments
import MomentsNetworking
import MomentsHTTP
import MomentsBFF

/// Where the round-trip time goes: bare `URLSession.data(for:)`, the transport alone,
/// the client without decoding, and the full service call, against the same nginx.
enum HTTPBreakdown {
    /// Runs only the SDK path, 64 concurrent, for `seconds`, for a profiler to watch.
    static func profile(seconds: Int) async throws -> [Row] {
        let server = try NginxServer(answer: BenchmarkData.envelope(BenchmarkData.timeline(moments: 4)))
        defer { server.stop() }
        let client = HTTPClient(baseURL: server.baseURL, transport: URLSessionTransport()) { $0.coalescesRequests = false }
        let service = GraphQLMomentsService(client: client)
        // VARIANT picks what runs: the service (default), the transport alone, or bare
        // `URLSession.data(for:)` with the same request.
        let variant = ProcessInfo.processInfo.environment["VARIANT"] ?? "service"
        let width = Int(ProcessInfo.processInfo.environment["WIDTH"] ?? "64") ?? 64
        let transport = URLSessionTransport()
        let httpRequest = try client.makeHTTPRequest(for: GetMomentsByUserID(userID: "0"))
        let session = URLSession(configuration: .default)
        let urlRequest = URLSessionTransport.makeURLRequest(httpRequest)
        let body: @Sendable () async throws -> Void = switch variant {
        case "transport": { _ = try await transport.send(httpRequest) }
        case "raw": { _ = try await session.data(for: urlRequest) }
        default: { _ = try await service.getMoments(userID: "0") }
        }
        var rate = 0.0
        for _ in 0..<seconds {
            rate = try await HTTPBenchmark.concurrently(width, body)
        }
        return [Row(name: "profile: \(variant), \(width) concurrent", unit: "req/s", sdk: rate)]
    }

    static func run() async throws -> [Row] {
        let answer = BenchmarkData.envelope(BenchmarkData.timeline(moments: 4))
        let server = try NginxServer(answer: answer)
        defer { server.stop() }
        let transport = URLSessionTransport()
        let client = HTTPClient(baseURL: server.baseURL, transport: transport) { $0.coalescesRequests = false }
        let service = GraphQLMomentsService(client: client)
        let httpRequest = try client.makeHTTPRequest(for: GetMomentsByUserID(userID: "0"))
        let session = URLSession(configuration: .default)
        let urlRequest = URLSessionTransport.makeURLRequest(httpRequest)
        _ = try await session.data(for: urlRequest)
        let raw = Endpoint<Data>(.post, "/graphql").body(.data(httpRequest.body ?? Data(), contentType: "application/json"))

        var rows: [Row] = []
        let operation = GetMomentsByUserID(userID: "0")
        let encoder = client.configuration.encoder
        let response = HTTPResponse(statusCode: 200, body: answer)
        let decoder = JSONDecoder()
        let encodeRate = await Harness.rate(for: .milliseconds(300)) { _ = try? operation.body?.encoded(with: encoder); return 1 }
        let decodeRate = await Harness.rate(for: .milliseconds(300)) { _ = try? operation.decodeResponse(response, decoder: decoder); return 1 }
        let buildRate = await Harness.rate(for: .milliseconds(300)) { _ = try? client.makeHTTPRequest(for: operation); return 1 }
        rows.append(Row(name: "breakdown: encode GraphQL body", unit: "µs", sdk: 1e6 / encodeRate))
        rows.append(Row(name: "breakdown: build HTTPRequest (incl. body)", unit: "µs", sdk: 1e6 / buildRate))
        rows.append(Row(name: "breakdown: decode 4-moment answer (\(answer.count) B)", unit: "µs", sdk: 1e6 / decodeRate))
        let variants: [(String, @Sendable () async throws -> Void)] = [
            ("transport.send", { _ = try await transport.send(httpRequest) }),
            ("client.send(Endpoint<Data>)", { _ = try await client.send(raw) }),
            ("service.getMoments", { _ = try await service.getMoments(userID: "0") }),
        ]
        for (name, body) in variants {
            let pair = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { try await body(); return 1 } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { _ = try await session.data(for: urlRequest); return 1 } }
            )
            rows.append(Harness.row("breakdown: \(name), 1 at a time", unit: "req/s", pair, target: nil))
        }
        let completionSession = URLSession(configuration: .default)
        let concurrentVariants: [(String, @Sendable () async throws -> Void)] = [
            ("transport.send", { _ = try await transport.send(httpRequest) }),
            ("dataTask + completion handler", {
                let _: Data = try await withCheckedThrowingContinuation { continuation in
                    completionSession.dataTask(with: urlRequest) { data, _, error in
                        if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: data ?? Data()) }
                    }.resume()
                }
            }),
            ("service.getMoments", { _ = try await service.getMoments(userID: "0") }),
        ]
        for (name, body) in concurrentVariants {
            let pair = try await Harness.compare(
                sdk: { try await HTTPBenchmark.concurrently(64, body) },
                baseline: { try await HTTPBenchmark.concurrently(64) { _ = try await session.data(for: urlRequest) } }
            )
            rows.append(Harness.row("breakdown: \(name), 64 concurrent", unit: "req/s", pair, target: nil))
        }
        return rows
    }
}
