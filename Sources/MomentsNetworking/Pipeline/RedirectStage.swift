import Foundation
import MomentsHTTP

/// Follows redirects under the client's ``RedirectPolicy`` (transports never do):
/// credentials never go to another origin, 307 and 308 keep method and body, 301, 302
/// and 303 turn a write into a `GET`, loops and too many hops fail with
/// `redirectFailure`.
///
/// Every hop is part of the same attempt, within its deadline; a hop to another origin
/// runs under that origin's breaker, which its failures are charged to.
struct RedirectStage: CallStage {
    let policy: RedirectPolicy
    let identityNames: IdentityHeaderNames
    let origins: OriginGuards

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        let first = try await next(request, call)
        guard policy.scope != .none, RedirectChain.isRedirect(first) else { return first }
        return try await following(first, of: request, call, next: next)
    }

    /// Follows the redirect `first` answered `request` with, hop by hop. Apart from
    /// ``send(_:_:next:)``, whose frame stays small for the calls that are not redirected.
    @inline(never)
    private nonisolated(nonsending) func following(_ first: HTTPResponse, of request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        var redirects = RedirectChain(origin: request, policy: policy, identityNames: identityNames)
        var current = request
        var response = first
        var hop = call
        while let following = try redirects.follow(response, after: current) {
            hop.hopOrigin = RedirectChain.sameOrigin(following.url, current.url) ? hop.hopOrigin : origins.guardian(for: following.url)
            current = following
            response = try await next(current, hop)
        }
        return response
    }
}
