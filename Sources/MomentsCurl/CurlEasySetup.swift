import Foundation
import MomentsCCurl
import MomentsSupport
import MomentsHTTP

/// Sets up easy handles: the transport's configuration once per handle, and each
/// transfer's method, URL, fields, body and deadline. Runs on the event-loop thread.
struct CurlEasySetup {
    /// Options that are the same for every request of a transport, prepared once.
    let configuration: CurlTransport.Configuration
    private let noProxyList: String
    private let connectTimeoutMilliseconds: Int

    init(configuration: CurlTransport.Configuration) {
        self.configuration = configuration
        noProxyList = configuration.noProxy.joined(separator: ",")
        connectTimeoutMilliseconds = max(1, Int(configuration.connectTimeout.milliseconds))
    }

    /// Sets the options that are the same for every request of the transport, once per
    /// handle; returns the option libcurl refused, if any.
    func prepare(_ handle: CurlHandle) -> HTTPClientError? {
        let easy = handle.easy
        var refusals = FirstRefusal()
        refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        refusals.check(moments_curl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteBody), "WRITEFUNCTION")
        refusals.check(moments_curl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader), "HEADERFUNCTION")
        refusals.check(moments_curl_easy_setopt_read_callback(easy, curlReadBody), "READFUNCTION")
        refusals.check(moments_curl_easy_setopt_seek_callback(easy, curlSeekBody), "SEEKFUNCTION")
        refusals.check(moments_curl_easy_setopt_xferinfo_callback(easy, curlTransferInfo), "XFERINFOFUNCTION")
        refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds), "CONNECTTIMEOUT_MS")
        refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "SUPPRESS_CONNECT_HEADERS")
        refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")
        applyConfiguration(to: easy, &refusals)
        return refusals.error
    }

    /// Sets what belongs to one request; options equal to the handle's previous request
    /// (URL, header fields, deadline) are not set again. Returns a failure to answer the
    /// caller with when an option is refused or the request cannot be expressed.
    func apply(to handle: CurlHandle, for transfer: CurlTransfer) -> HTTPClientError? {
        let request = transfer.request
        let easy = handle.easy
        var refusals = FirstRefusal()
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "ERRORBUFFER")
        refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "WRITEDATA")
        refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context), "HEADERDATA")
        // The body callbacks always reach this transfer, never one the handle served
        // before: whenever libcurl sends a body again (on a new connection), it reads the
        // same bytes from the start. The progress callback is set only for a transfer
        // that reports progress.
        refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_READDATA, context), "READDATA")
        refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_SEEKDATA, context), "SEEKDATA")
        let reportsProgress = transfer.progress != nil
        if reportsProgress {
            refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, context), "XFERINFODATA")
        }
        if handle.reportsProgress != reportsProgress {
            refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_NOPROGRESS, reportsProgress ? 0 : 1), "NOPROGRESS")
            handle.reportsProgress = reportsProgress
        }
        if handle.url != request.url {
            handle.url = nil
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_URL, request.url.absoluteString), "URL")
            handle.url = request.url
        }
        let left = transfer.deadline - .now
        guard left > .zero else {
            return .transportFailure(TransportFailure(kind: .timedOut, message: "no complete answer within \(request.timeout)"))
        }
        let timeout = max(1, Int(left.milliseconds))
        if handle.timeoutMilliseconds != timeout {
            refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, timeout), "TIMEOUT_MS")
            handle.timeoutMilliseconds = timeout
        }
        if handle.freshConnection != !request.isRepeatable {
            // A request that is not repeatable never rides a kept-alive connection:
            // libcurl sends a request again by itself when a reused connection turns out
            // closed, even after the server read it, but never on a new one.
            refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_FRESH_CONNECT, request.isRepeatable ? 0 : 1), "FRESH_CONNECT")
            handle.freshConnection = !request.isRepeatable
        }
        applyMethodAndBody(request, to: easy, &refusals)
        if handle.headers != request.headers || handle.headerList == nil {
            if let invalid = applyHeaders(request, to: handle, &refusals) { return invalid }
        }
        let offersEncodings = configuration.acceptsCompressedResponses && !request.headers.contains("Accept-Encoding")
        if handle.offersEncodings != offersEncodings {
            // The empty string offers every encoding libcurl was built to decode; nil offers none.
            refusals.check(offersEncodings
                  ? moments_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, "")
                  : moments_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, nil), "ACCEPT_ENCODING")
            handle.offersEncodings = offersEncodings
        }
        return refusals.error
    }

    private func applyMethodAndBody(_ request: HTTPRequest, to easy: UnsafeMutableRawPointer, _ refusals: inout FirstRefusal) {
        // Back to a plain GET first: the handle may carry the previous request's method.
        refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1), "HTTPGET")
        refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, nil), "CUSTOMREQUEST")
        switch request.method {
        case .get where request.body == nil && request.streamedBody == nil:
            break
        case .head:
            refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY")
        default:
            if request.method != .post {
                refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "CUSTOMREQUEST")
            }
            if let streamed = request.streamedBody {
                // No fields: libcurl asks the read callback for the bytes, as it sends them.
                refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_POST, 1), "POST")
                refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_POSTFIELDS, nil), "POSTFIELDS")
                refusals.check(moments_curl_easy_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(streamed.length)), "POSTFIELDSIZE_LARGE")
                return
            }
            let body = request.body ?? Data()
            if request.method == .post || !body.isEmpty {
                refusals.check(moments_curl_easy_setopt_long(easy, CURLOPT_POST, 1), "POST")
                refusals.check(moments_curl_easy_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "POSTFIELDSIZE_LARGE")
                // COPYPOSTFIELDS copies the bytes, so the handle never points into Swift memory.
                body.withUnsafeBytes { bytes in
                    let base = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    refusals.check(moments_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base)),
                          "COPYPOSTFIELDS")
                }
            }
        }
    }

    /// Builds the header list. libcurl's own defaults that the caller did not ask for are
    /// switched off: `Expect: 100-continue` (a second's wait on servers that ignore it)
    /// and the form content type it gives bodies without one.
    private func applyHeaders(_ request: HTTPRequest, to handle: CurlHandle, _ refusals: inout FirstRefusal) -> HTTPClientError? {
        var list: UnsafeMutablePointer<curl_slist>?
        var hasExpect = false
        var hasContentType = false
        if let invalid = HeaderValidation.firstInvalidField(in: request.headers) {
            return .invalidRequest("the header field \(invalid) holds CR, LF or NUL, or its name is not a token")
        }
        for field in request.headers {
            if field.name.count == 6, field.name.lowercased() == "expect" { hasExpect = true }
            if field.name.count == 12, field.name.lowercased() == "content-type" { hasContentType = true }
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            list = curl_slist_append(list, line)
        }
        if !hasExpect { list = curl_slist_append(list, "Expect:") }
        if !hasContentType { list = curl_slist_append(list, "Content-Type:") }
        refusals.check(moments_curl_easy_setopt_list(handle.easy, CURLOPT_HTTPHEADER, list), "HTTPHEADER")
        curl_slist_free_all(handle.headerList)
        handle.headerList = list
        handle.headers = request.headers
        return nil
    }

    private func applyConfiguration(to easy: UnsafeMutableRawPointer, _ refusals: inout FirstRefusal) {
        let version = configuration.preferredHTTPVersion == .http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
        // A libcurl built without HTTP/2 refuses 2TLS; it then speaks HTTP/1.1, which is right.
        _ = moments_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(version))
        switch configuration.proxy {
        case .none:
            // An empty proxy string switches proxies off, the environment's included.
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_PROXY, ""), "PROXY")
        case .url(let url):
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_PROXY, url), "PROXY")
        case .environment:
            break
        }
        if !noProxyList.isEmpty {
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_NOPROXY, noProxyList), "NOPROXY")
        }
        if let file = configuration.certificateAuthorityFile {
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_CAINFO, file), "CAINFO")
        }
        if let directory = configuration.certificateAuthorityDirectory {
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_CAPATH, directory), "CAPATH")
        }
        if let certificate = configuration.clientCertificate {
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_SSLCERT, certificate.certificateFile), "SSLCERT")
            if let key = certificate.keyFile {
                refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_SSLKEY, key), "SSLKEY")
            }
            if let password = certificate.keyPassword {
                refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_KEYPASSWD, password), "KEYPASSWD")
            }
        }
        if let pinned = configuration.pinnedPublicKey {
            refusals.check(moments_curl_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, pinned), "PINNEDPUBLICKEY")
        }
    }
}

/// libcurl's body callback: hands the bytes to the transfer; a short count aborts.
let curlWriteBody: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}

/// libcurl's read callback: the next bytes of a streamed body; aborts when the body
/// cannot be read.
let curlReadBody: curl_read_callback = { buffer, size, count, context in
    let abort = Int(CURL_READFUNC_ABORT)
    guard let context, let buffer else { return abort }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.readBody(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count)) ?? abort
}

/// libcurl's seek callback: back to an offset of a streamed body (to send it again).
let curlSeekBody: curl_seek_callback = { context, offset, origin in
    guard let context, origin == SEEK_SET else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    return transfer.seekBody(to: Int64(offset)) ? Int32(CURL_SEEKFUNC_OK) : Int32(CURL_SEEKFUNC_FAIL)
}

/// libcurl's progress callback: the bytes sent so far (received bytes are counted as
/// the body arrives, decoded).
let curlTransferInfo: curl_xferinfo_callback = { context, _, _, uploadTotal, uploadNow in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    transfer.progress?.sent(Int64(uploadNow), of: uploadTotal > 0 ? Int64(uploadTotal) : nil)
    return 0
}

/// libcurl's header callback: one line at a time.
let curlWriteHeader: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}

/// An easy handle kept for reuse by the event loop, with what its last request set, so
/// an option equal to it is not set again (libcurl re-parses a URL and copies a header
/// list on every call). Loop-confined.
final class CurlHandle {
    let easy: UnsafeMutableRawPointer
    var url: URL?
    var headers: HTTPHeaders?
    var headerList: UnsafeMutablePointer<curl_slist>?
    var timeoutMilliseconds: Int?
    var offersEncodings: Bool?
    var reportsProgress: Bool?
    var freshConnection: Bool?

    init(easy: UnsafeMutableRawPointer) {
        self.easy = easy
    }

    /// Frees the easy handle and its header list.
    func close() {
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        headerList = nil
    }
}

/// The first option libcurl refused while a handle was set up; later ones are not
/// recorded (one is enough to fail the transfer, and the first says why).
struct FirstRefusal {
    private var refused: (option: String, code: CURLcode)?

    mutating func check(_ code: CURLcode, _ option: String) {
        if code != CURLE_OK, refused == nil { refused = (option, code) }
    }

    /// The refusal as the caller's error, or `nil` when every option was taken.
    var error: HTTPClientError? {
        guard let refused else { return nil }
        let said = String(cString: curl_easy_strerror(refused.code))
        return .transportFailure(
            TransportFailure(kind: .other, message: "libcurl refused option \(refused.option): \(said)"),
            underlyingError: CurlError(code: Int(refused.code.rawValue), message: said)
        )
    }
}
