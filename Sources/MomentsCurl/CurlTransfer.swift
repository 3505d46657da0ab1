import Foundation
import MomentsSupport
import MomentsCCurl
import Synchronization
import MomentsHTTP

/// One request on its way through a ``CurlTransport``'s event loop: it gathers the
/// answer from libcurl's callbacks and resumes its caller exactly once, whichever comes
/// first of completion, failure, cancellation or the size limit.
///
/// Safety of `@unchecked Sendable`: the mutable properties marked *loop-confined* are
/// read and written only on the event-loop thread (libcurl calls the callbacks there,
/// and the loop sets up, completes and removes the handle there); the only state other
/// threads touch is `outcome`, behind a lock; everything else is immutable.
final class CurlTransfer: @unchecked Sendable {
    private enum Outcome {
        case created
        case waiting(CheckedContinuation<CurlAnswer, any Error>)
        case finished
    }

    let request: HTTPRequest
    /// The origin it goes to (`scheme://authority`), for the loop's per-origin limit.
    let origin: String
    /// When its deadline passes: its timeout from the moment it was sent, time spent
    /// waiting for a connection included.
    let deadline: ContinuousClock.Instant
    /// Where the transfer's progress goes, if it reports progress.
    let progress: TransferProgressReporter?
    private let outcome = PThreadMutex(Outcome.created)
    /// libcurl's words for the last failure (`CURLOPT_ERRORBUFFER`), owned by the transfer.
    let errorBuffer: UnsafeMutablePointer<CChar>

    // Loop-confined.
    var easy: UnsafeMutableRawPointer?
    /// The wake-up that fails the transfer at its deadline while it waits for a slot.
    private var waitDeadline: UInt64?
    private var body: BodyAccumulator
    private var fields = RawHeaderFields()
    private var finalHeadersEnded = false
    private var sawStatusLine = false
    private var interimStatus = false
    /// A failure the transfer decided on itself (the size limit, a file that cannot be
    /// read), reported instead of libcurl's "write error" or "aborted by callback".
    private var localFailure: HTTPClientError?
    /// Reads the streamed body, if any, as libcurl sends it (opened at the first read).
    private var bodyReader: StreamedBody.Reader?
    /// The destination file while the body is written to it.
    private var download: DownloadFile?
    /// Body bytes received (kept in `body`, or written to `file`).
    private var received: Int64 = 0
    /// The body's announced length, when it arrives as announced (identity encoding).
    private var announcedLength: Int64?
    /// The current header block's first `Content-Length` (`nil` if absent or not a
    /// number) and first `Content-Encoding`, read as their lines arrive.
    private var contentLength: Int64?
    private var sawContentLength = false
    private var sawContentEncoding = false
    /// Whether the body arrives as sent (no `Content-Encoding`, or `identity`).
    private var isIdentityEncoded = true

    init(request: HTTPRequest, progress: TransferProgressReporter? = nil, bodyMemory: BodyMemoryPool? = nil) {
        self.request = request
        self.origin = Self.origin(of: request.url)
        self.deadline = .now + request.timeout
        self.progress = progress
        body = BodyAccumulator(pool: bodyMemory)
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        body.discard()
        errorBuffer.deallocate()
        closeFile(succeeded: false)
    }

    // MARK: The caller's side (any thread)

    /// Installs the caller's continuation. Returns `false`, having resumed it, when the
    /// transfer was cancelled before it started.
    func start(_ continuation: CheckedContinuation<CurlAnswer, any Error>) -> Bool {
        let alreadyFinished = outcome.withLock { outcome -> Bool in
            guard case .created = outcome else { return true }
            outcome = .waiting(continuation)
            return false
        }
        if alreadyFinished { continuation.resume(throwing: HTTPClientError.cancelled()) }
        return !alreadyFinished
    }

    /// Whether the caller has been answered.
    var isFinished: Bool {
        outcome.withLock { if case .finished = $0 { true } else { false } }
    }

    /// Answers the caller with `result` unless it has been answered; returns whether
    /// this call answered it.
    @discardableResult
    func finish(_ result: Result<CurlAnswer, HTTPClientError>) -> Bool {
        let continuation = outcome.withLock { outcome -> CheckedContinuation<CurlAnswer, any Error>?? in
            switch outcome {
            case .finished: return .none
            case .created:
                outcome = .finished
                return .some(nil)
            case .waiting(let continuation):
                outcome = .finished
                return .some(continuation)
            }
        }
        guard case .some(let waiting) = continuation else { return false }
        waiting?.resume(with: result.mapError { $0 as any Error })
        return true
    }

    /// `scheme://authority` of `url`, read off its text and lowercased: the text up to
    /// the first `/`, `?` or `#` after the first `://` (the whole text without one).
    ///
    /// It reads the text's bytes once: made for every request, it must cost nothing
    /// beside the request (searching the text as characters costs microseconds).
    static func origin(of url: URL) -> String {
        var text = url.absoluteString
        let ascii = text.withUTF8 { bytes -> String? in
            var end = bytes.count
            var schemeEnd: Int?
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                if byte >= 0x80 { return nil }  // not ASCII: lowercased as Unicode text below
                if schemeEnd != nil {
                    if byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") {
                        end = index
                        break
                    }
                } else if byte == UInt8(ascii: ":"), index + 2 < bytes.count,
                          bytes[index + 1] == UInt8(ascii: "/"), bytes[index + 2] == UInt8(ascii: "/") {
                    schemeEnd = index + 3
                    index += 3
                    continue
                }
                index += 1
            }
            guard schemeEnd != nil else { return nil }
            return String(unsafeUninitializedCapacity: end) { buffer in
                for position in 0..<end {
                    let byte = bytes[position]
                    buffer[position] = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
                }
                return end
            }
        }
        if let ascii { return ascii }
        guard let schemeEnd = text.range(of: "://") else { return text }
        let authorityEnd = text[schemeEnd.upperBound...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? text.endIndex
        return String(text[..<authorityEnd]).lowercased()
    }

    // MARK: Waiting for a slot (the event-loop thread)

    /// Fails the transfer at its deadline if it is still waiting then, and tells the
    /// loop through `expired` to let it go.
    func armWaitDeadline(on timer: DeadlineTimer, expired: @escaping @Sendable () -> Void) {
        let timeout = request.timeout
        waitDeadline = timer.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            if self.finish(.failure(.transportFailure(TransportFailure(
                kind: .timedOut, message: "no complete answer within \(timeout): the request waited for a connection all that time"
            )))) {
                expired()
            }
        }
    }

    /// The transfer is about to start: its wait is over.
    func disarmWaitDeadline(on timer: DeadlineTimer) {
        if let waitDeadline { timer.cancel(waitDeadline) }
        waitDeadline = nil
    }

    // MARK: libcurl's side (the event-loop thread)

    /// Takes one header line (status lines, fields, the blank line ending a block, and
    /// trailers). Returns `false` to abort the transfer.
    func receiveHeaderLine(_ line: UnsafeRawBufferPointer) -> Bool {
        var end = line.count
        while end > 0, line[end - 1] == UInt8(ascii: "\n") || line[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end == 0 { return endOfHeaderBlock() }
        if finalHeadersEnded { return true }  // a trailer
        if end > 5, line[0] == UInt8(ascii: "H"), line[1] == UInt8(ascii: "T"), line[2] == UInt8(ascii: "T"),
           line[3] == UInt8(ascii: "P"), line[4] == UInt8(ascii: "/") {
            // A new status line: interim answers (100, 103) and their fields are dropped.
            fields.removeAll()
            sawStatusLine = true
            interimStatus = Self.statusIsInterim(line[0..<end])
            contentLength = nil
            sawContentLength = false
            sawContentEncoding = false
            isIdentityEncoded = true
            return true
        }
        guard let colon = line[0..<end].firstIndex(of: UInt8(ascii: ":")) else { return true }
        var valueStart = colon + 1
        while valueStart < end, line[valueStart] == UInt8(ascii: " ") || line[valueStart] == UInt8(ascii: "\t") { valueStart += 1 }
        var valueEnd = end
        while valueEnd > valueStart, line[valueEnd - 1] == UInt8(ascii: " ") || line[valueEnd - 1] == UInt8(ascii: "\t") { valueEnd -= 1 }
        let name = line[0..<colon]
        let value = line[valueStart..<valueEnd]
        // The two fields the body's handling depends on, read here once instead of looked up later.
        if !sawContentLength, HeaderBytes.equalsIgnoringCase(name, "content-length") {
            sawContentLength = true
            contentLength = HeaderBytes.decimal(value)
        } else if !sawContentEncoding, HeaderBytes.equalsIgnoringCase(name, "content-encoding") {
            sawContentEncoding = true
            isIdentityEncoded = value.isEmpty || HeaderBytes.equalsIgnoringCase(value, "identity")
        }
        fields.append(name: name, value: value)
        return true
    }

    private static func statusIsInterim(_ line: Slice<UnsafeRawBufferPointer>) -> Bool {
        guard let space = line.firstIndex(of: UInt8(ascii: " ")), space + 1 < line.endIndex else { return false }
        return line[space + 1] == UInt8(ascii: "1")
    }

    private func endOfHeaderBlock() -> Bool {
        guard sawStatusLine, !interimStatus, !finalHeadersEnded else { return true }
        finalHeadersEnded = true
        if let destination = request.destination {
            // Truncated again for each answer: a redirect's body is not kept.
            closeFile(succeeded: true)
            do throws(HTTPClientError) {
                download = try DownloadFile(creating: destination)
            } catch {
                localFailure = error
                return false
            }
        }
        received = 0
        announcedLength = isIdentityEncoded ? contentLength : nil
        progress?.received(0, of: request.method == .head ? 0 : announcedLength)
        guard request.method != .head, let announced = announcedLength, announced > 0 else { return true }
        if let limit = request.maximumResponseSize, announced > Int64(limit) {
            localFailure = .responseTooLarge(limit: limit, received: Int(clamping: announced))
            return false
        }
        if download == nil { body.reserve(Int(min(announced, 16 << 20))) }
        return true
    }

    /// Takes body bytes (decoded, when libcurl decodes). Returns `false` to abort.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Bool {
        if let limit = request.maximumResponseSize, received + Int64(bytes.count) > Int64(limit) {
            localFailure = .responseTooLarge(limit: limit, received: Int(clamping: received + Int64(bytes.count)))
            return false
        }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return true }
        if let download {
            do throws(HTTPClientError) {
                try download.write(bytes)
            } catch {
                localFailure = error
                return false
            }
        } else if !body.append(UnsafeRawBufferPointer(start: base, count: bytes.count)) {
            localFailure = .transportFailure(TransportFailure(kind: .other, message: "out of memory for the answer's body"))
            return false
        }
        received += Int64(bytes.count)
        progress?.received(received, of: announcedLength)
        return true
    }

    /// Closes the destination file; removes it unless the download `succeeded`.
    private func closeFile(succeeded: Bool) {
        download?.finish(succeeded: succeeded)
        download = nil
    }

    /// The body as libcurl reads it through the callbacks: the streamed body, or the body
    /// held in memory (libcurl sends that one from its own copy, but should it ever read
    /// it again through the callback, it gets the same bytes, never an early end).
    private var readableBody: StreamedBody? {
        request.streamedBody ?? request.body.map { StreamedBody([.bytes($0)]) }
    }

    /// The next bytes of the body into `buffer`; `nil` to abort the transfer.
    func readBody(into buffer: UnsafeMutableRawBufferPointer) -> Int? {
        guard let streamed = readableBody else { return 0 }
        let reader = bodyReader ?? StreamedBody.Reader(streamed)
        bodyReader = reader
        do {
            let count = try reader.read(into: buffer)
            progress?.sent(reader.position, of: streamed.length)
            return count
        } catch {
            localFailure = (error as? HTTPClientError) ?? .invalidRequest("the body could not be read: \(error)")
            return nil
        }
    }

    /// Moves the body back to `offset` (to send it again); `false` when it cannot.
    func seekBody(to offset: Int64) -> Bool {
        guard let streamed = readableBody else { return false }
        let reader = bodyReader ?? StreamedBody.Reader(streamed)
        bodyReader = reader
        do {
            try reader.seek(to: offset)
            return true
        } catch {
            localFailure = (error as? HTTPClientError) ?? .invalidRequest("the body could not be read again: \(error)")
            return false
        }
    }

    /// Answers the caller from libcurl's result for the finished transfer.
    func complete(_ code: CURLcode) {
        guard let easy else { return }
        if let localFailure {
            closeFile(succeeded: false)
            finish(.failure(localFailure))
            return
        }
        guard code == CURLE_OK else {
            closeFile(succeeded: false)
            finish(.failure(CurlFailure.clientError(for: code, on: easy, transfer: self, bodyCount: Int(clamping: received),
                                                    identityEncoded: isIdentityEncoded)))
            return
        }
        if let destination = request.destination {
            // No body came (a HEAD, a 204): the file is there all the same, empty.
            if download == nil { try? DownloadFile.write(Data(), to: destination) }
            closeFile(succeeded: true)
        }
        var status = 0
        _ = moments_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        var version = 0
        _ = moments_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
        finish(.success(CurlAnswer(statusCode: status, fields: fields, body: body.take(), httpVersion: Self.httpVersion(version),
                                   bodyFile: request.destination)))
    }

    /// The message libcurl left in the error buffer, or `nil`.
    var libcurlMessage: String? {
        let text = String(cString: errorBuffer).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }

    private static func httpVersion(_ value: Int) -> HTTPVersion? {
        switch value {
        case CURL_HTTP_VERSION_1_0: .http1_0
        case CURL_HTTP_VERSION_1_1: .http1_1
        case CURL_HTTP_VERSION_2_0: .http2
        case CURL_HTTP_VERSION_3: .http3
        default: nil
        }
    }
}
