import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Dispatch
import Synchronization

/// The state of one request sent by ``URLSessionTransport``: it gathers the answer and
/// resumes the caller exactly once, whichever comes first of completion, failure,
/// cancellation, the deadline or the size limit.
final class URLSessionExchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var earlyFailure: HTTPClientError?
        var isFinished = false
        var statusCode = 0
        var headers = HTTPHeaders()
        var body = Data()
        var expectedLength: Int64 = -1
        var deadline: UInt64?
    }

    private let task: URLSessionDataTask
    private let limit: Int?
    private let expectsBody: Bool
    private let state = Mutex(State())
    private let timer: DeadlineTimer

    init(task: URLSessionDataTask, limit: Int?, expectsBody: Bool, timer: DeadlineTimer) {
        self.task = task
        self.timer = timer
        self.limit = limit
        self.expectsBody = expectsBody
    }

    /// Installs the caller's continuation. Returns `false`, having resumed it, if the
    /// exchange already failed (cancelled before it started).
    func start(_ continuation: CheckedContinuation<HTTPResponse, any Error>) -> Bool {
        let earlyFailure: HTTPClientError? = state.withLock { state in
            if state.isFinished { return state.earlyFailure ?? .cancelled() }
            state.continuation = continuation
            return nil
        }
        if let earlyFailure {
            continuation.resume(throwing: earlyFailure)
            cancelTaskAsynchronously()
            return false
        }
        return true
    }

    func scheduleDeadline(after timeout: Duration) {
        let token = timer.schedule(after: timeout) { [weak self] in
            self?.finish(throwing: .transportFailure(TransportFailure(
                kind: .timedOut,
                message: "no complete answer within \(timeout)"
            )))
        }
        let scheduled = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            state.deadline = token
            return true
        }
        if !scheduled { timer.cancel(token) }
    }

    /// Takes the status and headers; returns whether to go on reading the body.
    func receive(_ response: URLResponse) -> Bool {
        if let limit, response.expectedContentLength > Int64(limit) {
            finish(throwing: .responseTooLarge(limit: limit, received: Int(response.expectedContentLength)))
            return false
        }
        guard let http = response as? HTTPURLResponse else { return true }
        var headers = HTTPHeaders()
        for (name, value) in http.allHeaderFields {
            headers.add(name: String(describing: name), value: String(describing: value))
        }
        state.withLock { state in
            state.statusCode = http.statusCode
            state.headers = headers
            state.expectedLength = response.expectedContentLength
        }
        return true
    }

    func receive(_ data: Data) {
        let overLimit: Int? = state.withLock { state in
            guard !state.isFinished else { return nil }
            state.body.append(data)
            if let limit, state.body.count > limit { return state.body.count }
            return nil
        }
        if let limit, let overLimit {
            finish(throwing: .responseTooLarge(limit: limit, received: overLimit))
        }
    }

    func complete(error: (any Error)?) {
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, Result<HTTPResponse, HTTPClientError>) in
            guard !state.isFinished else { return (nil, .failure(.cancelled())) }
            state.isFinished = true
            if let token = state.deadline { timer.cancel(token) }
            state.deadline = nil
            let continuation = state.continuation
            state.continuation = nil
            let received = Int64(state.body.count)
            let bodyless = !expectsBody || state.statusCode == 204 || state.statusCode == 304
            // Content-Length counts the bytes on the wire; a compressed body arrives
            // decoded, of another length. Its truncation is reported by the platform.
            let encoding = state.headers["Content-Encoding"]?.lowercased() ?? "identity"
            let comparable = encoding == "identity" || encoding.isEmpty
            // A deadline that ran out is a timeout, however much of the body had come.
            let timedOut = (error as? URLError)?.code == .timedOut
            if !timedOut, !bodyless, comparable, state.expectedLength >= 0, received < state.expectedLength {
                return (continuation, .failure(.transportFailure(TransportFailure(
                    kind: .truncatedResponse,
                    message: "the body ended after \(received) of \(state.expectedLength) bytes"
                ))))
            }
            if let error {
                return (continuation, .failure(URLSessionErrorMapping.clientError(for: error)))
            }
            let response = HTTPResponse(statusCode: state.statusCode, headers: state.headers, body: state.body)
            state.body = Data()
            return (continuation, .success(response))
        }
        continuation?.resume(with: result)
    }

    /// Ends the exchange with `error` now, if it has not ended, and cancels the task.
    func finish(throwing error: HTTPClientError) {
        let (wasRunning, continuation) = state.withLock { state -> (Bool, CheckedContinuation<HTTPResponse, any Error>?) in
            guard !state.isFinished else { return (false, nil) }
            state.isFinished = true
            state.earlyFailure = error
            if let token = state.deadline { timer.cancel(token) }
            state.deadline = nil
            state.body = Data()
            let continuation = state.continuation
            state.continuation = nil
            return (true, continuation)
        }
        guard wasRunning else { return }
        continuation?.resume(throwing: error)
        if continuation != nil { cancelTaskAsynchronously() }
    }

    /// `URLSessionTask.cancel()` hops synchronously onto the session's queue; calling it
    /// from a cancellation handler can deadlock, so it is issued from another thread.
    private func cancelTaskAsynchronously() {
        let task = self.task
        DispatchQueue.global().async { task.cancel() }
    }
}

enum URLSessionErrorMapping {
    /// The platform's error as an ``HTTPClientError``: the kind from its code (or, where
    /// FoundationNetworking reports libcurl's failures as code -1, from libcurl's
    /// message), the platform's own message kept, and the error itself underneath.
    static func clientError(for error: any Error) -> HTTPClientError {
        let nsError = error as NSError
        let said = (nsError.userInfo[NSLocalizedDescriptionKey] as? String) ?? ""
        guard nsError.domain == NSURLErrorDomain else {
            let message = said.isEmpty ? "\(nsError.domain) \(nsError.code)" : said
            return .transportFailure(TransportFailure(kind: .other, message: message), underlyingError: error)
        }
        let code = URLError.Code(rawValue: nsError.code)
        var kind: TransportFailure.Kind
        switch code {
        case .cancelled: return .cancelled()
        case .cannotConnectToHost: kind = .connectionRefused
        case .networkConnectionLost: kind = .connectionReset
        case .cannotFindHost, .dnsLookupFailed: kind = .hostNotFound
        case .timedOut: kind = .timedOut
        case .notConnectedToInternet: kind = .notConnected
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            kind = .secureConnectionFailed
        case .badServerResponse, .cannotParseResponse, .zeroByteResource, .cannotDecodeRawData:
            kind = .badResponse
        default: kind = .other
        }
        if kind == .other { kind = kindFromMessage(said) ?? .other }
        var message = said.isEmpty ? "URLError \(nsError.code)" : "\(said) (URLError \(nsError.code))"
        if processIsOutOfFileDescriptors() { message += "; the process has too many open files (EMFILE)" }
        return .transportFailure(TransportFailure(kind: kind, message: message), underlyingError: error)
    }

    /// Whether opening a file descriptor fails with EMFILE now: libcurl then reports a
    /// failed connection without saying why.
    static func processIsOutOfFileDescriptors() -> Bool {
        let descriptor = dup(STDERR_FILENO)
        if descriptor >= 0 {
            close(descriptor)
            return false
        }
        return errno == EMFILE
    }

    /// libcurl's words for failures FoundationNetworking reports as code -1.
    static func kindFromMessage(_ message: String) -> TransportFailure.Kind? {
        let lowered = message.lowercased()
        if ["ssl", "tls", "certificate"].contains(where: lowered.contains) { return .secureConnectionFailed }
        if lowered.contains("transfer closed with") || lowered.contains("partial file") { return .truncatedResponse }
        if lowered.contains("connection reset") || lowered.contains("recv failure") || lowered.contains("empty reply") { return .connectionReset }
        if lowered.contains("couldn't connect") || lowered.contains("connection refused") { return .connectionRefused }
        if lowered.contains("could not resolve") { return .hostNotFound }
        if lowered.contains("timed out") { return .timedOut }
        return nil
    }
}
