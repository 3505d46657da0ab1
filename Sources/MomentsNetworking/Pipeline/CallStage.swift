import MomentsHTTP

/// One stage of a call's way to the network: it may change the request or the call,
/// send it on through `next` (zero, one or more times), and change the answer.
///
/// The stages, outermost first, each in a file of its own with the rule it keeps:
/// ``RetryStage``, ``HedgeStage``, ``MiddlewareStage`` (authentication and the caller's
/// middlewares), ``CoalescingStage``, ``ConcurrencyLimitStage``, ``RedirectStage``,
/// ``BreakerStage``, and ``TransportStage``, which sends. Every error a stage throws is
/// an `HTTPClientError`.
///
/// A stage with nothing to do for a call (no middleware to run, nothing to share) says
/// so in ``isNeeded(for:_:)``, and the call goes on past it: a call costs nothing for a
/// policy it does not use.
///
/// Every stage runs where its caller runs (`nonisolated(nonsending)`): in the call's own
/// task (``CallTask``), on the global executor, so going from one stage to the next is a
/// plain call, not a switch of executor on the way in and another on the way out.
protocol CallStage: Sendable {
    /// Whether `send` has anything to do for `request` in `call`; `false` sends the
    /// request straight to the next stage. It decides only: it changes nothing.
    func isNeeded(for request: HTTPRequest, _ call: Call) -> Bool

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse
}

extension CallStage {
    func isNeeded(for request: HTTPRequest, _ call: Call) -> Bool { true }
}

/// Stages folded around a transport, as middlewares are: each stage's `next` is the
/// rest of the pipeline.
struct CallPipeline: Sendable {
    private let stages: [any CallStage]

    /// A pipeline of `stages`, outermost first; the last one sends, and does not call `next`.
    init(_ stages: [any CallStage]) {
        self.stages = stages
    }

    /// Sends `request` through every stage, in the call's own task (see ``CallTask``).
    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call) async throws -> HTTPResponse {
        try await call.task.run { try await Next(pipeline: self, index: 0)(request, call) }
    }

    /// The rest of the pipeline after a stage.
    struct Next: Sendable {
        fileprivate let pipeline: CallPipeline
        fileprivate let index: Int

        /// Sends `request` through the stages after the current one that have anything
        /// to do for it.
        nonisolated(nonsending) func callAsFunction(_ request: HTTPRequest, _ call: Call) async throws -> HTTPResponse {
            let stages = pipeline.stages
            var index = index
            while index < stages.count, !stages[index].isNeeded(for: request, call) { index += 1 }
            guard index < stages.count else {
                throw HTTPClientError.invalidRequest("the client's last stage passed the request on instead of sending it")
            }
            return try await stages[index].send(request, call, next: Next(pipeline: pipeline, index: index + 1))
        }
    }
}
