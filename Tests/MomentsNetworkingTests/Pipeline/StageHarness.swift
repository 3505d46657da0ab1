import Foundation
@testable import MomentsNetworking
import MomentsSupport
import MomentsTesting
import MomentsHTTP

/// The stage after the one under test: answers from a closure that sees the request,
/// the call as it arrived and the number of the arrival, and records both.
final class StubNext: CallStage {
    typealias Handler = @Sendable (_ arrival: Int, _ request: HTTPRequest, _ call: Call) async throws -> HTTPResponse

    private let handler: Handler
    private let state = PThreadMutex<[(HTTPRequest, Call)]>([])

    init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    var arrivals: Int { state.withLock { $0.count } }
    var requests: [HTTPRequest] { state.withLock { $0.map(\.0) } }
    var calls: [Call] { state.withLock { $0.map(\.1) } }

    func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        let arrival = state.withLock { arrivals -> Int in
            arrivals.append((request, call))
            return arrivals.count
        }
        return try await handler(arrival, request, call)
    }
}

enum StageHarness {
    static let url = URL(string: "https://api.example.com/v1/thing")!

    static func request(_ method: HTTPMethod = .get, url: URL = url, repeatable: Bool? = nil) -> HTTPRequest {
        HTTPRequest(method: method, url: url, timeout: .seconds(30), isRepeatable: repeatable)
    }

    static func origin(clock: any MomentsClock, breaker: CircuitBreakerPolicy? = nil, budget: RetryBudget? = RetryBudget(),
                       hedging: HedgingPolicy? = nil) -> OriginGuard {
        OriginGuard(breaker: breaker, budget: budget, hedging: hedging, now: clock.now)
    }

    static func call(
        clock: any MomentsClock, deadline: Duration = .seconds(30), repeatable: Bool = true, hedges: Bool = false,
        coalesces: Bool = false, keepsIdentity: Bool = false, origin: OriginGuard? = nil
    ) -> Call {
        let now = clock.now
        return Call(
            context: RequestContext(requestName: "Thing", allowsRetry: repeatable), started: now, deadline: now + deadline,
            isRepeatable: repeatable, hedges: hedges, coalesces: coalesces, middlewares: [],
            origin: origin ?? Self.origin(clock: clock), record: CallRecord(keepsIdentity: keepsIdentity)
        )
    }

    static func instruments() -> ClientInstruments {
        ClientInstruments(configuration: HTTPClient.Configuration(baseURL: url))
    }

    static func reply(_ status: Int, headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(statusCode: status, headers: headers, body: Data("{}".utf8))
    }

    static func failure(_ kind: TransportFailure.Kind) -> HTTPClientError {
        .transportFailure(TransportFailure(kind: kind, message: "\(kind)"))
    }
}
