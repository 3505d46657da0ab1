import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Testing
import MomentsHTTP
import MomentsBFF

/// Every fault the reference BFF can inject, seen through a `MomentsStore`: the typed
/// error, no hang past the deadline, and the persisted and streamed state unchanged.
@Suite(.serialized) struct StoreFaultTests {
    struct Case: Sendable, CustomStringConvertible {
        let description: String
        let fault: [String: any Sendable]?
        let code: HTTPClientError.Code
        var kind: TransportFailure.Kind?
        var status: Int?
    }

    static let cases: [Case] = [
        Case(description: "HTTP 500", fault: ["kind": "status", "status": 500], code: .serverError, status: 500),
        Case(description: "HTTP 503 with Retry-After", fault: ["kind": "status", "status": 503, "retryAfter": "120"], code: .serverError, status: 503),
        Case(description: "HTTP 503 without Retry-After", fault: ["kind": "status", "status": 503], code: .serverError, status: 503),
        Case(description: "HTTP 401", fault: ["kind": "status", "status": 401], code: .serverError, status: 401),
        // Closed every time: a query's one retry on a fresh connection meets it too.
        Case(description: "reset mid-response", fault: ["kind": "reset", "count": 3], code: .transportFailure),
        Case(description: "slow answer past the timeout", fault: ["kind": "slow", "seconds": 20], code: .transportFailure, kind: .timedOut),
        Case(description: "HTML instead of JSON", fault: ["kind": "html"], code: .decodingFailure),
        Case(description: "truncated JSON", fault: ["kind": "truncated"], code: .transportFailure, kind: .truncatedResponse),
        Case(description: "empty body", fault: ["kind": "empty"], code: .decodingFailure),
        Case(description: "malformed JSON", fault: ["kind": "malformed"], code: .decodingFailure),
        Case(description: "GraphQL errors without data", fault: ["kind": "graphqlError"], code: .graphQLFailure),
        Case(description: "GraphQL errors with partial data", fault: ["kind": "graphqlError", "partial": true], code: .graphQLFailure),
        Case(description: "answer over the size limit", fault: ["kind": "large", "bytes": 2_000_000], code: .responseTooLarge),
        Case(description: "server that never closes", fault: ["kind": "hang"], code: .transportFailure, kind: .timedOut),
        Case(description: "connection refused", fault: nil, code: .transportFailure, kind: .connectionRefused),
    ]

    @Test(arguments: cases)
    func aFaultLeavesTheStoreAsItWas(_ fault: Case) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try JSONFilePersistence(directory: directory.url)
        // A short deadline only where the fault is about deadlines; a BFF started beside
        // two compilers took more than 2 s over its first answer. Warmed first, so the
        // store's first refresh meets an answer the BFF has ready.
        let timeout: Duration = fault.kind == .timedOut ? .seconds(2) : .seconds(60)
        _ = try await GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL)).getMoments(userID: "0")
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.timeout = timeout
            $0.maximumResponseSize = 512 * 1024
        }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
        let good = try await store.refresh(userID: "0")
        let probe = StreamProbe(await store.updates(for: "0"))
        #expect(await probe.waitFor(count: 1) == [good])

        if let spec = fault.fault { try await bff.injectFault(spec) } else { await bff.stopAndWait() }
        let started = ContinuousClock.now
        let refreshError = await #expect(throws: HTTPClientError.self) { try await store.refresh(userID: "0") }
        let elapsed = ContinuousClock.now - started

        #expect(refreshError?.code == fault.code, "\(String(describing: refreshError))")
        if let kind = fault.kind { #expect(refreshError?.transportFailure?.kind == kind) }
        if let status = fault.status { #expect(refreshError?.statusCode == status) }
        #expect(elapsed < timeout + .seconds(8), "no hang past the configured timeout (with room for a loaded machine)")

        // A like during the fault is rolled back the same way. The fault covers two sends:
        // libcurl silently re-sends a request whose reused connection died before any answer.
        if var spec = fault.fault {
            spec["count"] = max(2, spec["count"] as? Int ?? 0)
            try await bff.injectFault(spec)
        }
        await #expect(throws: HTTPClientError.self) { try await store.setLike(true, momentID: "1", userID: "0") }

        #expect(try await store.details(for: "0") == good)
        #expect(try await persistence.load(userID: "0") == good, "nothing persisted was lost or changed")
        // Shut down, the store ends the stream after its last value.
        await store.shutdown(gracePeriod: .seconds(60))
        #expect(await probe.waitForEnd().last == good, "the stream shows the last good state")
        let reopened = MomentsStore(service: GraphQLMomentsService(client: client), persistence: try JSONFilePersistence(directory: directory.url))
        #expect(try await reopened.details(for: "0") == good)
    }
}
