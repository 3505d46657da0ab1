public import MomentsHTTP
/// A step between ``HTTPClient`` and its transport that may change the request, the
/// response, or both.
///
/// Middlewares run in order for the request and in reverse for the response: the
/// client's, then the request's own, then the transport. An error a middleware throws
/// (other than an `HTTPClientError` passing through) is reported as
/// `HTTPClientError.Code.middlewareFailure`.
///
/// For example:
/// ```swift
/// struct RequestID: HTTPMiddleware {
///     func intercept(_ request: HTTPRequest, context: RequestContext,
///                    next: @Sendable (HTTPRequest) async throws -> HTTPResponse) async throws -> HTTPResponse {
///         var request = request
///         request.headers["X-Request-ID"] = UUID().uuidString
///         return try await next(request)
///     }
/// }
/// ```
public protocol HTTPMiddleware: Sendable {
    /// Handles `request`, calling `next` to pass it on (zero, one or more times).
    func intercept(
        _ request: HTTPRequest,
        context: RequestContext,
        next: @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse

    /// Whether this middleware may add or change a header that says who the request
    /// speaks for (`Authorization`, `Cookie`, …). The default is `true`.
    ///
    /// The client cannot know such a request's identity before sending it, so it never
    /// serves it from the cache or stores its answer there. Return `false` from a
    /// middleware that only observes or adds neutral headers, to keep caching.
    var mayAddCredentials: Bool { get }

    /// What this middleware will add to the headers that say who `request` speaks for,
    /// known before it runs: the client keys cached answers by it. The default follows
    /// ``mayAddCredentials``: ``IdentityContribution/unknowable`` if it may add
    /// credentials, ``IdentityContribution/unchanged`` if not.
    ///
    /// A middleware that adds a known credential (a token it is about to send) says
    /// so with ``IdentityContribution/adds(_:)``, and its requests stay cacheable.
    func identityContribution(for request: HTTPRequest) async throws -> IdentityContribution
}

extension HTTPMiddleware {
    /// The default is `true`: a middleware is assumed to add credentials unless it says otherwise.
    public var mayAddCredentials: Bool { true }

    /// The default follows ``mayAddCredentials``.
    public func identityContribution(for request: HTTPRequest) async throws -> IdentityContribution {
        mayAddCredentials ? .unknowable : .unchanged
    }
}

/// What a middleware adds to who a request speaks for (see
/// ``HTTPMiddleware/identityContribution(for:)``).
public enum IdentityContribution: Sendable {
    /// It adds or changes no header that carries identity.
    case unchanged
    /// It adds these header fields (a credential the client can know before sending).
    case adds(HTTPHeaders)
    /// It may add credentials the client cannot know before sending: the request is
    /// neither served from the cache nor stored there.
    case unknowable
}

/// What a middleware knows about the request it handles.
public struct RequestContext: Sendable {
    /// The name of the ``Request`` type, e.g. `GetMomentsByUserID`.
    public var requestName: String {
        switch name {
        case .text(let text): text
        case .type(let type): String(describing: type)
        }
    }

    /// Named lazily: the client passes the type, and most requests meet no middleware
    /// that asks for its name.
    private enum Name: Sendable {
        case text(String)
        case type(any Request.Type)
    }

    private let name: Name
    /// 1 for the first attempt, 2 for the first retry, and so on.
    public let attempt: Int
    /// Whether the request may be sent more than once.
    public let allowsRetry: Bool
    /// The request's priority.
    public let priority: RequestPriority

    /// The context of attempt `attempt` of the request named `requestName`.
    package init(requestName: String, attempt: Int = 1, allowsRetry: Bool = false, priority: RequestPriority = .normal) {
        self.init(name: .text(requestName), attempt: attempt, allowsRetry: allowsRetry, priority: priority)
    }

    init(requestType: any Request.Type, allowsRetry: Bool, priority: RequestPriority) {
        self.init(name: .type(requestType), attempt: 1, allowsRetry: allowsRetry, priority: priority)
    }

    /// The same request's context for another attempt.
    func attempt(_ attempt: Int) -> RequestContext {
        RequestContext(name: name, attempt: attempt, allowsRetry: allowsRetry, priority: priority)
    }

    private init(name: Name, attempt: Int, allowsRetry: Bool, priority: RequestPriority) {
        self.name = name
        self.attempt = attempt
        self.allowsRetry = allowsRetry
        self.priority = priority
    }
}

/// Folds middlewares around a terminal step.
enum MiddlewareChain {
    static func run(
        _ request: HTTPRequest,
        context: RequestContext,
        middlewares: [any HTTPMiddleware],
        terminal: @escaping @Sendable (HTTPRequest) async throws -> HTTPResponse
    ) async throws -> HTTPResponse {
        var next = terminal
        for middleware in middlewares.reversed() {
            let inner = next
            next = { request in
                do {
                    return try await middleware.intercept(request, context: context, next: inner)
                } catch let error as HTTPClientError {
                    throw error
                } catch {
                    if Task.isCancelled || error is CancellationError { throw HTTPClientError.cancelled() }
                    throw HTTPClientError.middlewareFailure(String(describing: type(of: middleware)), error: error)
                }
            }
        }
        return try await next(request)
    }
}
