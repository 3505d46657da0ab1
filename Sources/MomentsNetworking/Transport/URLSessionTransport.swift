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
///   the limit is abandoned before it is all read;
/// - on Linux, a URL whose host is an IPv6 literal (`http://[::1]:8080`) is refused
///   with `HTTPClientError.Code.invalidRequest` before anything is sent:
///   FoundationNetworking fails every such request with a bare `URLError -1000`.
///   `CurlTransport` (product `MomentsCurl`) reaches them.
public final class URLSessionTransport: HTTPTransport {
    /// How the transport's session is set up.
    public struct Configuration: Sendable {
        /// Connections kept per host. The default is 6.
        public var maximumConnectionsPerHost: Int = 6
        /// Whether cookies are stored and sent. The default is `false`: a server-side
        /// client should not share one user's cookies with another's requests.
        public var handlesCookies: Bool = false

        /// Creates a configuration with every default.
        public init() {}
    }

    private let session: URLSession
    private let delegate: URLSessionTransportDelegate
    private let deadlines = DeadlineTimer()
    /// The serial queue behind the delegate's `OperationQueue`; `underlyingQueue` does not
    /// retain it, so the transport must.
    private let delegateDispatchQueue = DispatchQueue(label: "MomentsNetworking.URLSessionTransport.delegate")

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
        self.session = URLSession(configuration: sessionConfiguration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        session.finishTasksAndInvalidate()
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
        let task: URLSessionTask
        var spooled: URL?
        if request.destination != nil, request.streamedBody == nil {
            // A download task writes the body to a file of the session's as it arrives,
            // at the pace of the disk: a data task's delegate would get every chunk
            // queued in memory faster than it can write them.
            task = session.downloadTask(with: Self.makeURLRequest(request))
        } else if let streamed = request.streamedBody {
            // URLSession streams an upload from one file; a body of several pieces (a
            // multipart form) is first copied into a temporary file, piece by piece.
            let file: URL
            if streamed.segments.count == 1, case .file(let url, _) = streamed.segments[0] {
                file = url
            } else {
                file = try await BodySpool.write(streamed)
                spooled = file
            }
            task = session.uploadTask(with: Self.makeURLRequest(request), fromFile: file)
        } else {
            task = session.dataTask(with: Self.makeURLRequest(request))
        }
        defer { if let spooled { try? FileManager.default.removeItem(at: spooled) } }
        let progress = TransferProgressReporter.current
        progress?.begin(expectedToSend: request.bodyLength)
        let exchange = URLSessionExchange(
            task: task,
            limit: request.maximumResponseSize,
            expectsBody: request.method != .head,
            timer: deadlines,
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
        if request.streamedBody != nil {
            urlRequest.setValue(String(request.bodyLength), forHTTPHeaderField: "Content-Length")
        }
        // Our own timer enforces the deadline; URLSession's (whole seconds, idle) is a backstop.
        urlRequest.timeoutInterval = max(1, request.timeout.seconds.rounded(.up) + 1)
        return urlRequest
    }
}

/// Routes the session's callbacks to the exchange each task belongs to.
final class URLSessionTransportDelegate: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, Sendable {
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
        if task is URLSessionDownloadTask, let exchange = exchanges[task.taskIdentifier] {
            // FoundationNetworking traps on Linux when a download task does not follow a
            // redirect (it hands the redirect's body to a data-task callback), and when
            // the task is cancelled before the decision is given: the redirect is
            // answered now, without its body, the task cancelled, and the decision
            // never given.
            exchange.answerRedirect(response)
            task.cancel()
            return
        }
        completionHandler(nil)
    }

    /// Asked when the session must send a request again (the kept-alive connection closed
    /// as the request arrived) and needs its body from the first byte. FoundationNetworking
    /// can take a new stream only for a body that was itself a stream, and otherwise
    /// sends the announced length with no bytes: the attempt fails here instead, with
    /// `TransportFailure.Kind.requestNotSent`, and the task is cancelled
    /// before the server could see a whole request.
    func urlSession(_ session: URLSession, task: URLSessionTask, needNewBodyStream completionHandler: @escaping (InputStream?) -> Void) {
        exchanges[task.taskIdentifier]?.finish(throwing: .transportFailure(TransportFailure(
            kind: .requestNotSent,
            message: "the connection closed as the request was sent, and URLSession cannot send its body again"
        )))
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchanges[task.taskIdentifier]?.sent(totalBytesSent, of: totalBytesExpectedToSend)
    }

    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        exchanges[downloadTask.taskIdentifier]?.downloaded(totalBytesWritten, of: totalBytesExpectedToWrite)
    }

    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        exchanges[downloadTask.taskIdentifier]?.finishedDownloading(to: location)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchanges[dataTask.taskIdentifier]?.receive(data)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        exchanges.removeValue(forKey: task.taskIdentifier)?.complete(error: error)
    }
}

/// Copies a `StreamedBody` into a temporary file (created 0600), on a thread of its
/// own: `URLSession` streams uploads from one file only.
enum BodySpool {
    static func write(_ body: StreamedBody) async throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("moments-upload-\(UUID().uuidString)")
        return try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                do {
                    try copy(body, to: url)
                    continuation.resume(returning: url)
                } catch {
                    try? FileManager.default.removeItem(at: url)
                    continuation.resume(throwing: error)
                }
            }
            thread.name = "MomentsNetworking.BodySpool"
            thread.start()
        }
    }

    private static func copy(_ body: StreamedBody, to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw HTTPClientError.invalidRequest("cannot prepare the upload in \(url.path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let reader = StreamedBody.Reader(body)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 256 << 10, alignment: 16)
        defer { buffer.deallocate() }
        guard let base = buffer.baseAddress else { return }
        while true {
            let count = try reader.read(into: buffer)
            if count == 0 { return }
            do throws(AtomicFile.Failure) {
                try AtomicFile.writeAll(UnsafeRawBufferPointer(start: base, count: count), to: descriptor)
            } catch {
                throw HTTPClientError.invalidRequest("cannot prepare the upload in \(url.path): \(error.reason)")
            }
        }
    }
}
