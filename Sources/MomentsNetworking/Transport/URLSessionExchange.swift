import Foundation
import MomentsSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Dispatch
import Synchronization
import MomentsHTTP

/// The state of one request sent by ``URLSessionTransport``: it gathers the answer (in
/// memory, or into the request's destination file) and resumes the caller exactly once,
/// whichever comes first of completion, failure, cancellation, the deadline or the size
/// limit; it reports progress to the transfer's reporter, if any.
final class URLSessionExchange: Sendable {
    private struct State {
        var continuation: CheckedContinuation<HTTPResponse, any Error>?
        var earlyFailure: HTTPClientError?
        var isFinished = false
        var statusCode = 0
        var headers = HTTPHeaders()
        var body = Data()
        /// Body bytes received (kept in `body`, or written to `file`).
        var received: Int64 = 0
        var expectedLength: Int64 = -1
        var deadline: UInt64?
        /// The destination file while the body is written to it.
        var download: DownloadFile?
        /// Whether the task completed: a cancel of such a task, arriving after the
        /// session let go of it, kills the process in FoundationNetworking ("a task that
        /// is not in the registry").
        var taskEnding = false
        /// Whether the caller was answered on the response's announced length, with the
        /// task left to end by itself until the deadline (see ``refuse(with:)``).
        var isRefused = false
    }

    private let task: URLSessionTask
    private let limit: Int?
    private let expectsBody: Bool
    private let destination: URL?
    private let progress: TransferProgressReporter?
    private let state = PThreadMutex(State())
    private let timer: DeadlineTimer
    /// Set when the transport invalidates the task's session.
    private let sessionInvalidated: PThreadMutex<Bool>

    init(
        task: URLSessionTask, limit: Int?, expectsBody: Bool, timer: DeadlineTimer, sessionInvalidated: PThreadMutex<Bool>,
        destination: URL? = nil, progress: TransferProgressReporter? = nil
    ) {
        self.task = task
        self.sessionInvalidated = sessionInvalidated
        self.timer = timer
        self.limit = limit
        self.expectsBody = expectsBody
        self.destination = destination
        self.progress = progress
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
            self?.deadlineEnded(timeout)
        }
        let scheduled = state.withLock { state -> Bool in
            guard !state.isFinished else { return false }
            state.deadline = token
            return true
        }
        if !scheduled { timer.cancel(token) }
    }

    /// The deadline passed: the caller is answered that it timed out, unless it was
    /// answered already; a task still running after its answer was refused is cancelled.
    private func deadlineEnded(_ timeout: Duration) {
        let cancelsRefusedTask = state.withLock { state -> Bool in
            state.deadline = nil
            return state.isRefused && !state.taskEnding
        }
        if cancelsRefusedTask {
            cancelTaskAsynchronously()
        } else {
            finish(throwing: .transportFailure(TransportFailure(kind: .timedOut, message: "no complete answer within \(timeout)")))
        }
    }

    /// Takes the status and headers; returns whether to go on reading the body.
    ///
    /// On `false`, the caller has its error at once and the delegate answers `.cancel`;
    /// the task is cancelled by the deadline if it is still running then (see
    /// ``refuse(with:)``).
    func receive(_ response: URLResponse) -> Bool {
        if let limit, response.expectedContentLength > Int64(limit) {
            refuse(with: .responseTooLarge(limit: limit, received: Int(response.expectedContentLength)))
            return false
        }
        guard let http = response as? HTTPURLResponse else { return true }
        let headers = Self.headers(of: http)
        var download: DownloadFile?
        if let destination {
            do throws(HTTPClientError) {
                download = try DownloadFile(creating: destination)
            } catch {
                refuse(with: error)
                return false
            }
        }
        state.withLock { state in
            state.statusCode = http.statusCode
            state.headers = headers
            state.expectedLength = response.expectedContentLength
            state.download = download
        }
        progress?.received(0, of: response.expectedContentLength >= 0 ? response.expectedContentLength : nil)
        return true
    }

    func receive(_ data: Data) {
        let outcome: (overLimit: Int64?, failure: HTTPClientError?, received: Int64, expected: Int64) = state.withLock { state in
            guard !state.isFinished else { return (nil, nil, 0, -1) }
            state.received += Int64(data.count)
            if let limit, state.received > Int64(limit) { return (state.received, nil, state.received, state.expectedLength) }
            if let download = state.download {
                if let failure = Self.write(data, to: download) { return (nil, failure, 0, -1) }
            } else {
                state.body.append(data)
            }
            return (nil, nil, state.received, state.expectedLength)
        }
        if let limit, let overLimit = outcome.overLimit {
            finish(throwing: .responseTooLarge(limit: limit, received: Int(clamping: overLimit)))
        } else if let failure = outcome.failure {
            finish(throwing: failure)
        } else if outcome.received > 0 {
            progress?.received(outcome.received, of: outcome.expected >= 0 ? outcome.expected : nil)
        }
    }

    /// Body bytes sent so far, from the session.
    func sent(_ count: Int64, of expected: Int64) {
        progress?.sent(count, of: expected >= 0 ? expected : nil)
    }

    /// Writes all of `data` to `download`; the failure, if it cannot.
    private static func write(_ data: Data, to download: DownloadFile) -> HTTPClientError? {
        data.withUnsafeBytes { bytes -> HTTPClientError? in
            do throws(HTTPClientError) {
                try download.write(bytes)
                return nil
            } catch {
                return error
            }
        }
    }

    func complete(error: (any Error)?) {
        let (continuation, result) = state.withLock { state -> (CheckedContinuation<HTTPResponse, any Error>?, Result<HTTPResponse, HTTPClientError>) in
            state.taskEnding = true
            // Still armed after a refusal, to cancel a task that would not end.
            if let token = state.deadline { timer.cancel(token) }
            state.deadline = nil
            guard !state.isFinished else { return (nil, .failure(.cancelled())) }
            state.isFinished = true
            let continuation = state.continuation
            state.continuation = nil
            let received = state.received
            let bodyless = !expectsBody || state.statusCode == 204 || state.statusCode == 304
            // Content-Length counts the bytes on the wire; a compressed body arrives
            // decoded, of another length. Its truncation is reported by the platform.
            let encoding = state.headers["Content-Encoding"]?.lowercased() ?? "identity"
            let comparable = encoding == "identity" || encoding.isEmpty
            // A deadline that ran out is a timeout, however much of the body had come.
            let timedOut = (error as? URLError)?.code == .timedOut
            let download = state.download
            state.download = nil
            if !timedOut, !bodyless, comparable, state.expectedLength >= 0, received < state.expectedLength {
                download?.finish(succeeded: false)
                return (continuation, .failure(.transportFailure(TransportFailure(
                    kind: .truncatedResponse,
                    message: "the body ended after \(received) of \(state.expectedLength) bytes"
                ))))
            }
            if let error {
                download?.finish(succeeded: false)
                return (continuation, .failure(URLSessionErrorMapping.clientError(for: error)))
            }
            if let destination, download == nil {
                // No body came (a HEAD, a 204): the file is there all the same, empty.
                try? DownloadFile.write(Data(), to: destination)
            }
            download?.finish(succeeded: true)
            let response = HTTPResponse(statusCode: state.statusCode, headers: state.headers, body: state.body, bodyFile: destination)
            state.body = Data()
            return (continuation, .success(response))
        }
        continuation?.resume(with: result)
    }

    private static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
        var headers = HTTPHeaders()
        for (name, value) in response.allHeaderFields {
            headers.add(name: String(describing: name), value: String(describing: value))
        }
        return headers
    }

    /// Answers the caller with `error`, the delegate having refused the response, and
    /// leaves the task to end by itself until the deadline, which cancels it.
    ///
    /// FoundationNetworking on Linux ignores the delegate's `.cancel`, so the task goes
    /// on reading the body it announced, holding its connection. Cancelling it at once
    /// races the end of a body that arrives quickly: a cancel that meets the task's
    /// completion on the session's queue removes it from the session's registry twice,
    /// which kills the process (it did in 2 of 26 runs of `moments timeline` refusing a
    /// 130 MB answer). A body still coming at the deadline is one that drips or stalls,
    /// whose end is not about to meet the cancel: the connection is then freed, not held
    /// for as long as the server keeps sending.
    private func refuse(with error: HTTPClientError) {
        end(with: error, refused: true)?.resume(throwing: error)
    }

    /// Ends the exchange with `error` now, if it has not ended, and cancels the task
    /// unless its end is already the session's.
    func finish(throwing error: HTTPClientError) {
        guard let continuation = end(with: error, refused: false) else { return }
        continuation.resume(throwing: error)
        cancelTaskAsynchronously()
    }

    /// Marks the exchange ended with `error`, if it had not ended, dropping what it
    /// gathered; returns the caller's continuation to resume (`nil` if the exchange had
    /// ended, or no caller waits yet). A refused exchange keeps its deadline armed: it
    /// cancels a task still running then (see ``refuse(with:)``).
    private func end(with error: HTTPClientError, refused: Bool) -> CheckedContinuation<HTTPResponse, any Error>? {
        state.withLock { state in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            state.isRefused = refused
            state.earlyFailure = error
            if !refused, let token = state.deadline {
                timer.cancel(token)
                state.deadline = nil
            }
            state.body = Data()
            state.download?.finish(succeeded: false)
            state.download = nil
            defer { state.continuation = nil }
            return state.continuation
        }
    }

    /// `URLSessionTask.cancel()` hops synchronously onto the session's queue; calling it
    /// from a cancellation handler can deadlock, so it is issued from another thread. It
    /// is not issued once the task's end is the session's (see `State.taskEnding`) or the
    /// session was invalidated (which cancels every task itself).
    private func cancelTaskAsynchronously() {
        let task = self.task
        DispatchQueue.global().async { [self] in
            guard !state.withLock({ $0.taskEnding }), !sessionInvalidated.withLock({ $0 }) else { return }
            task.cancel()
        }
    }
}

enum URLSessionErrorMapping {
    /// The platform's error as an `HTTPClientError`: the kind from its code (or, where
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
        if ["connection reset", "recv failure", "empty reply", "send failure", "broken pipe"].contains(where: lowered.contains) {
            return .connectionReset
        }
        if lowered.contains("couldn't connect") || lowered.contains("connection refused") { return .connectionRefused }
        if lowered.contains("could not resolve") { return .hostNotFound }
        if lowered.contains("timed out") { return .timedOut }
        return nil
    }
}
