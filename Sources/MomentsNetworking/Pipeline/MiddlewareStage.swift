import MomentsHTTP

/// The client's middlewares, then the request's own, then authentication (which adds its
/// credential last, so no middleware of the caller's sees it), folded around the rest of
/// the pipeline (see ``HTTPMiddleware``).
///
/// An error a middleware throws that is not an `HTTPClientError` becomes
/// `HTTPClientError.Code.middlewareFailure`; a cancellation, `cancelled`.
struct MiddlewareStage: CallStage {
    let configured: [any HTTPMiddleware]
    let authentication: AuthenticationMiddleware?

    /// Only when there is a middleware to run.
    func isNeeded(for request: HTTPRequest, _ call: Call) -> Bool {
        !configured.isEmpty || !call.middlewares.isEmpty || authentication != nil
    }

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        var chain = configured + call.middlewares
        if let authentication { chain.append(authentication) }
        return try await MiddlewareChain.run(request, context: call.context, middlewares: chain) { request in
            try await next(request, call)
        }
    }
}
