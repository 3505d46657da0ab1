import MomentsHTTP

/// At most ``HTTPClient/Configuration-swift.struct/maximumConcurrentRequests`` exchanges
/// at once; a call waits for a slot by priority, within its own deadline (the time it
/// waits is part of it), and fails with `overloaded` when too many already wait. The
/// slot is held across the request's redirect hops.
struct ConcurrencyLimitStage: CallStage {
    let limiter: ConcurrencyLimiter

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        if try !limiter.takeFreeSlot() {
            try await limiter.waitForSlot(priority: call.context.priority, deadline: call.attemptDeadline)
        }
        defer { limiter.release() }
        return try await next(request, call)
    }
}
