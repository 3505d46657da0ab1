import Foundation
import MomentsCCurl
import MomentsNetworking

/// Sets up an easy handle for one transfer: the request's method, URL, fields, body and
/// deadline, and the transport's configuration. Runs on the event-loop thread, on a
/// handle fresh from `curl_easy_init` or `curl_easy_reset`.
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

    /// Applies everything; returns a failure to answer the caller with when an option is
    /// refused or the request cannot be expressed.
    func apply(to easy: UnsafeMutableRawPointer, for transfer: CurlTransfer) -> HTTPClientError? {
        let request = transfer.request
        var failure: (option: String, code: CURLcode)?
        func check(_ code: CURLcode, _ option: String) {
            if code != CURLE_OK, failure == nil { failure = (option, code) }
        }
        let context = Unmanaged.passUnretained(transfer).toOpaque()

        check(moments_curl_easy_setopt_string(easy, CURLOPT_URL, request.url.absoluteString), "URL")
        check(moments_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        check(moments_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        check(moments_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer), "ERRORBUFFER")
        check(moments_curl_easy_setopt_write_callback(easy, CURLOPT_WRITEFUNCTION, curlWriteBody), "WRITEFUNCTION")
        check(moments_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context), "WRITEDATA")
        check(moments_curl_easy_setopt_write_callback(easy, CURLOPT_HEADERFUNCTION, curlWriteHeader), "HEADERFUNCTION")
        check(moments_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context), "HEADERDATA")
        check(moments_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int(request.timeout.milliseconds))), "TIMEOUT_MS")
        check(moments_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS, connectTimeoutMilliseconds), "CONNECTTIMEOUT_MS")
        check(moments_curl_easy_setopt_long(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1), "SUPPRESS_CONNECT_HEADERS")
        check(moments_curl_easy_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 0), "FOLLOWLOCATION")

        applyMethodAndBody(request, to: easy, check)
        if let invalid = applyHeaders(request, to: easy, for: transfer, check) { return invalid }
        applyConfiguration(to: easy, requestSetsEncoding: request.headers.contains("Accept-Encoding"), check)

        guard let failure else { return nil }
        let said = String(cString: curl_easy_strerror(failure.code))
        return .transportFailure(
            TransportFailure(kind: .other, message: "libcurl refused option \(failure.option): \(said)"),
            underlyingError: CurlError(code: Int(failure.code.rawValue), message: said)
        )
    }

    private func applyMethodAndBody(_ request: HTTPRequest, to easy: UnsafeMutableRawPointer, _ check: (CURLcode, String) -> Void) {
        switch request.method {
        case .get where request.body == nil:
            check(moments_curl_easy_setopt_long(easy, CURLOPT_HTTPGET, 1), "HTTPGET")
        case .head:
            check(moments_curl_easy_setopt_long(easy, CURLOPT_NOBODY, 1), "NOBODY")
        default:
            if request.method != .post {
                check(moments_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method.rawValue), "CUSTOMREQUEST")
            }
            let body = request.body ?? Data()
            if request.method == .post || !body.isEmpty {
                check(moments_curl_easy_setopt_long(easy, CURLOPT_POST, 1), "POST")
                check(moments_curl_easy_setopt_offset(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(body.count)), "POSTFIELDSIZE_LARGE")
                // COPYPOSTFIELDS copies the bytes, so the handle never points into Swift memory.
                body.withUnsafeBytes { bytes in
                    let base = bytes.baseAddress ?? UnsafeRawPointer(("" as StaticString).utf8Start)
                    check(moments_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: base)),
                          "COPYPOSTFIELDS")
                }
            }
        }
    }

    /// Builds the header list. libcurl's own defaults that the caller did not ask for are
    /// switched off: `Expect: 100-continue` (a second's wait on servers that ignore it)
    /// and the form content type it gives bodies without one.
    private func applyHeaders(
        _ request: HTTPRequest, to easy: UnsafeMutableRawPointer, for transfer: CurlTransfer, _ check: (CURLcode, String) -> Void
    ) -> HTTPClientError? {
        var list: UnsafeMutablePointer<curl_slist>?
        var hasExpect = false
        var hasContentType = false
        for field in request.headers {
            if field.name.contains(where: \.isNewline) || field.value.contains(where: \.isNewline) || field.name.contains(":") {
                curl_slist_free_all(list)
                return .invalidRequest("the header field \(field.name.debugDescription) holds a line break or a colon in its name")
            }
            if field.name.caseInsensitiveCompare("Expect") == .orderedSame { hasExpect = true }
            if field.name.caseInsensitiveCompare("Content-Type") == .orderedSame { hasContentType = true }
            let line = field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)"
            list = curl_slist_append(list, line)
        }
        if !hasExpect { list = curl_slist_append(list, "Expect:") }
        if !hasContentType { list = curl_slist_append(list, "Content-Type:") }
        transfer.headerList = list
        check(moments_curl_easy_setopt_list(easy, CURLOPT_HTTPHEADER, list), "HTTPHEADER")
        return nil
    }

    private func applyConfiguration(to easy: UnsafeMutableRawPointer, requestSetsEncoding: Bool, _ check: (CURLcode, String) -> Void) {
        if configuration.acceptsCompressedResponses, !requestSetsEncoding {
            // The empty string offers every encoding libcurl was built to decode.
            check(moments_curl_easy_setopt_string(easy, CURLOPT_ACCEPT_ENCODING, ""), "ACCEPT_ENCODING")
        }
        let version = configuration.preferredHTTPVersion == .http2 ? CURL_HTTP_VERSION_2TLS : CURL_HTTP_VERSION_1_1
        // A libcurl built without HTTP/2 refuses 2TLS; it then speaks HTTP/1.1, which is right.
        _ = moments_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(version))
        switch configuration.proxy {
        case .none:
            // An empty proxy string switches proxies off, the environment's included.
            check(moments_curl_easy_setopt_string(easy, CURLOPT_PROXY, ""), "PROXY")
        case .url(let url):
            check(moments_curl_easy_setopt_string(easy, CURLOPT_PROXY, url), "PROXY")
        case .environment:
            break
        }
        if !noProxyList.isEmpty {
            check(moments_curl_easy_setopt_string(easy, CURLOPT_NOPROXY, noProxyList), "NOPROXY")
        }
        if let file = configuration.certificateAuthorityFile {
            check(moments_curl_easy_setopt_string(easy, CURLOPT_CAINFO, file), "CAINFO")
        }
        if let directory = configuration.certificateAuthorityDirectory {
            check(moments_curl_easy_setopt_string(easy, CURLOPT_CAPATH, directory), "CAPATH")
        }
        if let certificate = configuration.clientCertificate {
            check(moments_curl_easy_setopt_string(easy, CURLOPT_SSLCERT, certificate.certificateFile), "SSLCERT")
            if let key = certificate.keyFile {
                check(moments_curl_easy_setopt_string(easy, CURLOPT_SSLKEY, key), "SSLKEY")
            }
            if let password = certificate.keyPassword {
                check(moments_curl_easy_setopt_string(easy, CURLOPT_KEYPASSWD, password), "KEYPASSWD")
            }
        }
        if let pinned = configuration.pinnedPublicKey {
            check(moments_curl_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, pinned), "PINNEDPUBLICKEY")
        }
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded up.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}

/// libcurl's body callback: hands the bytes to the transfer; a short count aborts.
let curlWriteBody: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    return transfer.receiveBody(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}

/// libcurl's header callback: one line at a time.
let curlWriteHeader: curl_write_callback = { buffer, size, count, context in
    guard let context else { return 0 }
    let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
    let total = size * count
    return transfer.receiveHeaderLine(UnsafeRawBufferPointer(start: buffer, count: total)) ? total : 0
}
