import Foundation
import MomentsSupport
#if canImport(FoundationNetworking)
package import FoundationNetworking
#endif
import Dispatch
public import MomentsHTTP

/// An `HTTPTransport` over one long-lived `URLSession`.
///
/// Built for Linux's FoundationNetworking as much as for Apple's:
/// - one session per transport, for its whole life (creating and invalidating sessions
///   per request leaks threads and has crashed);
/// - the deadline of each request is enforced with its own timer, because URLSession's
///   timeouts are idle timeouts truncated to whole seconds;
/// - cancellation answers the caller at once and cancels the network task from
///   another thread, so the cancelling thread can never deadlock against a task that
///   finishes at the same moment;
/// - the body is checked against the size limit as it arrives, and a body longer than
///   the limit is abandoned before it is all read; one whose announced length is over
///   the limit is refused at once, and since FoundationNetworking ignores a delegate's
///   refusal, its task is cancelled at the request's deadline if it is still running
///   then (at once, it could meet the body's end and crash FoundationNetworking), so a
///   server dripping the body cannot hold the connection;
/// - a request that is not repeatable (`HTTPRequest.isRepeatable` false) goes on
///   a session of its own, with `Connection: close`, so it never rides a kept-alive
///   connection that FoundationNetworking would find dead and send it on again by
///   itself; a server that honours `Connection: close` (RFC 9112 §9.6 says it must)
///   thus sees it at most once;
/// - a download's body is written to its file as it arrives, by this transport: no copy
///   is left in the system's temporary directory;
/// - a streamed body (a file, a multipart form) is read into memory, up to
///   ``Configuration-swift.struct/maximumStreamedBodySize``, and sent from there:
///   FoundationNetworking's file uploads can abort the process (its `try!` when a
///   transfer that lost its connection is resumed). Larger bodies are refused with
///   `HTTPClientError.Code.invalidRequest`; `CurlTransport` (product `MomentsCurl`)
///   streams bodies of any size;
/// - on Linux, a URL whose host is an IPv6 literal (`http://[::1]:8080`), and a `GET` or
///   `HEAD` with a body, are refused with `HTTPClientError.Code.invalidRequest` before
///   anything is sent: FoundationNetworking fails them with a misleading error.
///   `CurlTransport` sends both.
public final class URLSessionTransport: HTTPTransport {
    /// How the transport's session is set up.
    public struct Configuration: Sendable {
        /// Connections kept per host. The default is 6.
        public var maximumConnectionsPerHost: Int = 6
        /// Whether cookies are stored and sent. The default is `false`: a server-side
        /// client should not share one user's cookies with another's requests.
        public var handlesCookies: Bool = false
        /// The largest streamed body (a file, a multipart form) the transport sends, in
        /// bytes: it is read into memory first. The default is 64 MiB.
        public var maximumStreamedBodySize: Int64 = 64 << 20

        /// Creates a configuration with every default.
        public init() {}
    }

    private let session: URLSession
    /// The session of requests that are not repeatable, made at the first one: every such
    /// request carries `Connection: close`, so no connection of it is ever reused.
    private let singleUseSession: PThreadMutex<URLSession?> = PThreadMutex(nil)
    private let sessionConfiguration: URLSessionConfiguration
    private let delegateQueue: OperationQueue
    private let maximumStreamedBodySize: Int64
    private let delegate: URLSessionTransportDelegate
    private let deadlines = DeadlineTimer()
    /// The serial queue behind the delegate's `OperationQueue`; `underlyingQueue` does not
    /// retain it, so the transport must.
    private let delegateDispatchQueue = DispatchQueue(label: "MomentsNetworking.URLSessionTransport.delegate")
    /// Set by ``shutdown()``; held while a task is made, so no task is ever made on an
    /// invalidated session.
    private let isShutDown = PThreadMutex(false)

    /// Creates a transport with its own session.
    public init(configuration: Configuration = Configuration()) {
        let sessionConfiguration = URLSessionConfiguration.default
        sessionConfiguration.httpMaximumConnectionsPerHost = configuration.maximumConnectionsPerHost
        sessionConfiguration.requestCachePolicy = .reloadIgnoringLocalCacheData
        sessionConfiguration.urlCache = nil
        sessionConfiguration.httpShouldSetCookies = configuration.handlesCookies
        if !configuration.handlesCookies { sessionConfiguration.httpCookieStorage = nil }
        let delegate = URLSessionTransportDelegate()
        let queue = OperationQueue()
        queue.name = "MomentsNetworking.URLSessionTransport"
        queue.maxConcurrentOperationCount = 1
        queue.underlyingQueue = delegateDispatchQueue
        self.delegate = delegate
        self.sessionConfiguration = sessionConfiguration
        self.delegateQueue = queue
        self.maximumStreamedBodySize = configuration.maximumStreamedBodySize
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
        singleUseSession.withLock { $0?.finishTasksAndInvalidate() }
    }

    /// Ends the transport: requests still in flight fail as cancelled, later ones fail
    /// at once without being sent, and its sessions are invalidated, closing their
    /// connections. Idempotent.
    public func shutdown() async {
        let first = isShutDown.withLock { isShutDown -> Bool in
            defer { isShutDown = true }
            return !isShutDown
        }
        guard first else { return }
        session.invalidateAndCancel()
        singleUseSession.withLock { $0?.invalidateAndCancel() }
    }

    /// The session `request` goes on.
    private func session(for request: HTTPRequest) -> URLSession {
        guard !request.isRepeatable else { return session }
        return singleUseSession.withLock { made in
            if let made { return made }
            let new = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: delegateQueue)
            made = new
            return new
        }
    }

    /// The requests this transport has on the network now (for diagnostics and leak checks).
    package var requestsInFlight: Int { delegate.exchangesInFlight }

    /// Deadlines still armed (for diagnostics and leak checks).
    package var pendingDeadlines: Int { deadlines.pendingCount }

    /// Sends `request` and returns the answer (see `HTTPTransport`).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        #if canImport(FoundationNetworking)
        // FoundationNetworking compares libcurl's bracketed host with URL's unbracketed
        // one and fails every IPv6 literal with URLError -1000 (swift-corelibs-foundation
        // issue 5496): say so, instead of that bare code.
        if let host = request.url.host(percentEncoded: false), host.contains(":") {
            throw HTTPClientError.invalidRequest(
                "URLSessionTransport cannot reach the IPv6 literal address [\(host)] on Linux (a FoundationNetworking bug); use CurlTransport or a host name"
            )
        }
        #endif
        if request.method == .get || request.method == .head, request.body != nil || request.streamedBody != nil {
            throw HTTPClientError.invalidRequest(
                "URLSessionTransport cannot send a \(request.method) with a body on Linux (FoundationNetworking fails it as too large); use CurlTransport"
            )
        }
        if let invalid = HeaderValidation.firstInvalidField(in: request.headers) {
            throw HTTPClientError.invalidRequest("the header field \(invalid) holds CR, LF or NUL, or its name is not a token")
        }
        var sent = request
        if let streamed = request.streamedBody {
            guard streamed.length <= maximumStreamedBodySize else {
                throw HTTPClientError.invalidRequest(
                    "URLSessionTransport sends a streamed body from memory, at most \(maximumStreamedBodySize) bytes, and this one has \(streamed.length); use CurlTransport, which streams bodies of any size"
                )
            }
            sent.body = try await StreamedBodyLoader.load(streamed)
            sent.streamedBody = nil
        }
        if !request.isRepeatable { sent.headers["Connection"] = "close" }
        let urlRequest = Self.makeURLRequest(sent)
        guard let task = isShutDown.withLock({ isShutDown in isShutDown ? nil : session(for: request).dataTask(with: urlRequest) }) else {
            throw HTTPClientError.transportFailure(TransportFailure(kind: .requestNotSent, message: "the transport was shut down"))
        }
        let progress = TransferProgressReporter.current
        progress?.begin(expectedToSend: request.bodyLength)
        let exchange = URLSessionExchange(
            task: task,
            limit: request.maximumResponseSize,
            expectsBody: request.method != .head,
            timer: deadlines,
            sessionInvalidated: isShutDown,
            destination: request.destination,
            progress: progress
        )
        delegate.register(exchange, for: task)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                if exchange.start(continuation) {
                    exchange.scheduleDeadline(after: request.timeout)
                    task.resume()
                }
            }
        } onCancel: {
            exchange.finish(throwing: .cancelled())
        }
    }

    /// The `URLRequest` this transport sends for `request` (package-visible for the
    /// benchmarks' baseline, which must send exactly the same bytes).
    package static func makeURLRequest(_ request: HTTPRequest) -> URLRequest {
        var urlRequest = URLRequest(url: request.url)
        urlRequest.httpMethod = request.method.rawValue
        for field in request.headers {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        urlRequest.httpBody = request.body
        // Our own timer enforces the deadline; URLSession's (whole seconds, idle) is a backstop.
        urlRequest.timeoutInterval = max(1, request.timeout.seconds.rounded(.up) + 1)
        return urlRequest
    }
}

/// Routes the session's callbacks to the exchange each task belongs to.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = LockedDictionary<Int, URLSessionExchange>()

    var exchangesInFlight: Int { exchanges.count }

    func register(_ exchange: URLSessionExchange, for task: URLSessionTask) {
        exchanges[task.taskIdentifier] = exchange
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let allowed = exchanges[dataTask.taskIdentifier]?.receive(response) ?? false
        completionHandler(allowed ? .allow : .cancel)
    }

    /// Never follows a redirect: the 3xx answer goes back to ``HTTPClient``, which
    /// follows it under its ``RedirectPolicy`` (URLSession would resend credentials to
    /// any origin, and drop the body of a 307 or 308).
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    /// Asked when libcurl sends a request again by itself, on a new connection, because
    /// the kept-alive one it chose turned out closed, possibly after the server read the
    /// request. FoundationNetworking cannot send a body held in memory again (it would
    /// announce its length and send nothing), so the attempt fails here, before more
    /// than the request's head can go out again, and the client decides: it sends a
    /// repeatable request again, and reports that a request that is not repeatable may
    /// have been processed.
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        exchanges[task.taskIdentifier]?.finish(throwing: .transportFailure(TransportFailure(
            kind: .connectionReset,
            message: "the connection closed after the request was sent, and URLSession cannot send its body again"
        )))
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchanges[task.taskIdentifier]?.sent(totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchanges[dataTask.taskIdentifier]?.receive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchanges.removeValue(forKey: task.taskIdentifier)?.complete(error: error)
    }
}

/// Reads a `StreamedBody` into memory, on a thread of its own (its files are read with
/// blocking calls, which must not hold one of Swift's shared threads).
enum StreamedBodyLoader {
    static func load(_ body: StreamedBody) async throws -> Data {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data, any Error>) in
            let thread = Thread {
                do {
                    continuation.resume(returning: try read(body))
                } catch {
                    continuation.resume(throwing: (error as? HTTPClientError) ?? .invalidRequest("the body could not be read: \(error)"))
                }
            }
            thread.name = "MomentsNetworking.StreamedBodyLoader"
            thread.start()
        }
    }

    private static func read(_ body: StreamedBody) throws -> Data {
        var data = Data(count: Int(body.length))
        let reader = StreamedBody.Reader(body)
        var filled = 0
        try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            while filled < buffer.count {
                let count = try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                if count == 0 { break }
                filled += count
            }
        }
        guard filled == data.count else {
            throw HTTPClientError.invalidRequest("the body announced \(data.count) bytes but only \(filled) could be read")
        }
        return data
    }
}
