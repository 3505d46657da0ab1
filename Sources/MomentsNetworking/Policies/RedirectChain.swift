import Foundation
import MomentsHTTP

/// The redirects of one request, followed under a ``RedirectPolicy``.
struct RedirectChain {
    private let origin: HTTPRequest
    private let policy: RedirectPolicy
    private let identityNames: IdentityHeaderNames
    private(set) var visited: [URL]

    init(origin: HTTPRequest, policy: RedirectPolicy, identityNames: IdentityHeaderNames) {
        self.origin = origin
        self.policy = policy
        self.identityNames = identityNames
        visited = [origin.url]
    }

    /// Whether `response` asks to be followed elsewhere: a redirect status with a `Location`.
    static func isRedirect(_ response: HTTPResponse) -> Bool {
        [301, 302, 303, 307, 308].contains(response.statusCode) && response.headers["Location"] != nil
    }

    /// The request to send after `response` to `request`, or `nil` if `response` is the
    /// answer.
    ///
    /// - Throws: `HTTPClientError.Code.redirectFailure` for a redirect the
    ///   policy refuses, a loop, or too many hops.
    mutating func follow(_ response: HTTPResponse, after request: HTTPRequest) throws -> HTTPRequest? {
        let status = response.statusCode
        guard [301, 302, 303, 307, 308].contains(status), policy.scope != .none,
              let location = response.headers["Location"],
              let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
              let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }

        var next = request
        next.url = target
        let becomesGET = (status == 303 && request.method != .get && request.method != .head)
            || ((status == 301 || status == 302) && request.method == .post)
        if becomesGET {
            next.method = .get
            next.body = nil
            next.streamedBody = nil
            next.headers["Content-Type"] = nil
            next.headers["Content-Length"] = nil
            next.isRepeatable = true
        }
        let loops = visited.contains(target) && next.method == request.method && status != 303
        visited.append(target)
        if loops {
            throw HTTPClientError.redirectFailure("the server's redirects form a loop", chain: visited)
        }
        if visited.count - 1 > policy.maximumHops {
            throw HTTPClientError.redirectFailure("more than \(policy.maximumHops) redirects", chain: visited)
        }
        if !Self.sameOrigin(target, origin.url) {
            guard policy.scope == .anyOrigin else {
                throw HTTPClientError.redirectFailure(
                    "the server redirected to another origin, which the redirect policy does not follow", chain: visited
                )
            }
            // Credentials stay with the origin they were given for.
            for field in next.headers where identityNames.contains(field.name) {
                next.headers[field.name] = nil
            }
        }
        return next
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        a.scheme?.lowercased() == b.scheme?.lowercased()
            && a.host?.lowercased() == b.host?.lowercased()
            && effectivePort(a) == effectivePort(b)
    }

    private static func effectivePort(_ url: URL) -> Int? {
        url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
    }
}
