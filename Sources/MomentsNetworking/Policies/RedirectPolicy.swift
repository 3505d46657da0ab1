import MomentsHTTP
/// Which redirects ``HTTPClient`` follows. Transports never follow a redirect on their
/// own: the client does, under this policy, so that credentials never leave their
/// origin.
///
/// Following a redirect:
/// - 307 and 308 keep the method and the body;
/// - 301 and 302 after a POST, and 303 after anything but GET or HEAD, become a GET
///   without a body (RFC 9110, 15.4);
/// - to another origin (scheme, host or port), every identity header (`Authorization`,
///   `Cookie`, `Proxy-Authorization`, the client's ``HTTPClient/Configuration-swift.struct/identityHeaders``
///   and any header named like a credential) is removed first.
///
/// A redirect the policy does not allow, too many hops, or a loop fail with
/// `HTTPClientError.Code.redirectFailure` naming the chain of URLs;
/// with ``never`` the 3xx answer itself is the response.
public struct RedirectPolicy: Sendable, Hashable {
    /// Where redirects may lead.
    public enum Scope: Sendable, Hashable {
        /// No redirect is followed: the 3xx answer is the response.
        case none
        /// Only to the origin of the request (same scheme, host and port).
        case sameOrigin
        /// Anywhere, without credentials beyond the request's origin.
        case anyOrigin
    }

    /// Where redirects may lead.
    public var scope: Scope
    /// The most redirects followed for one request.
    public var maximumHops: Int

    /// Redirects followed within `scope`, at most `maximumHops` in a row.
    public init(scope: Scope, maximumHops: Int = 5) {
        self.scope = scope
        self.maximumHops = max(0, maximumHops)
    }

    /// Follows nothing.
    public static let never = RedirectPolicy(scope: .none, maximumHops: 0)
    /// Up to 5 redirects within the request's origin. The default.
    public static let sameOrigin = RedirectPolicy(scope: .sameOrigin)
    /// Up to 5 redirects anywhere; credentials stay with their origin.
    public static let anyOrigin = RedirectPolicy(scope: .anyOrigin)
}
