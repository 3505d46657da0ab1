import MomentsSupport
import MomentsHTTP

/// The request as every middleware left it: its credential values are noted (to redact
/// from everything reported about the call), its identity computed when the call needs
/// it (to cache its answer under), and identical requests in flight, identity included,
/// share one exchange when the call allows it (see ``HTTPClient/Configuration-swift.struct/coalescesRequests``).
struct CoalescingStage: CallStage {
    let coalescer: SingleFlight<CoalescingKey, HTTPResponse>
    let identityNames: IdentityHeaderNames
    let identityKey: [UInt8]

    /// Only when the call may share an exchange, needs its identity, or sends a credential.
    func isNeeded(for request: HTTPRequest, _ call: Call) -> Bool {
        call.coalesces || call.record.keepsIdentity || request.headers.contains { identityNames.contains($0.name) }
    }

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        call.record.collectSecrets(from: request.headers, names: identityNames)
        guard call.coalesces || call.record.keepsIdentity else { return try await next(request, call) }
        let identity = RequestIdentity(request.headers, names: identityNames, key: identityKey)
        call.record.record(identity)
        guard call.coalesces else { return try await next(request, call) }
        do {
            return try await coalescer.run(CoalescingKey(request, identity: identity)) {
                try await next(request, call)
            }
        } catch is CancellationError {
            throw HTTPClientError.cancelled()
        }
    }
}
