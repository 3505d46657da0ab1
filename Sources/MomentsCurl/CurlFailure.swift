import MomentsCCurl
import MomentsHTTP

/// A libcurl failure as libcurl reported it: its result code and its own message (from
/// `CURLOPT_ERRORBUFFER`, else `curl_easy_strerror`). It is the underlying error of the
/// `HTTPClientError` a ``CurlTransport`` throws.
public struct CurlError: Error, Sendable, Hashable, CustomStringConvertible {
    /// libcurl's `CURLcode`, e.g. 7 for "couldn't connect".
    public let code: Int
    /// What libcurl said.
    public let message: String

    /// Creates an error from a code and libcurl's message.
    public init(code: Int, message: String) {
        self.code = code
        self.message = message
    }

    /// libcurl's message and code, e.g. `Couldn't connect to server (curl error 7)`.
    public var description: String { "\(message) (curl error \(code))" }
}

/// Maps libcurl's result codes to `TransportFailure` kinds.
enum CurlFailure {
    static func clientError(
        for code: CURLcode, on easy: UnsafeMutableRawPointer, transfer: CurlTransfer, bodyCount: Int, identityEncoded: Bool
    ) -> HTTPClientError {
        let said = transfer.libcurlMessage ?? String(cString: curl_easy_strerror(code))
        let error = CurlError(code: Int(code.rawValue), message: said)
        let kind = Self.kind(of: code)
        var message = error.description
        if kind == .truncatedResponse, identityEncoded {
            var announced: curl_off_t = -1
            _ = moments_curl_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced)
            if announced >= 0 {
                message = "the body ended after \(bodyCount) of \(announced) bytes; \(message)"
            }
        }
        if kind == .timedOut {
            message = "no complete answer within \(transfer.request.timeout); \(message)"
        }
        return .transportFailure(TransportFailure(kind: kind, message: message), underlyingError: error)
    }

    static func kind(of code: CURLcode) -> TransportFailure.Kind {
        switch code {
        case CURLE_COULDNT_CONNECT: .connectionRefused
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .hostNotFound
        case CURLE_OPERATION_TIMEDOUT: .timedOut
        case CURLE_PARTIAL_FILE: .truncatedResponse
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING: .connectionReset
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
             CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND, CURLE_SSL_ENGINE_SETFAILED,
             CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
            .secureConnectionFailed
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_HTTP3,
             CURLE_UNSUPPORTED_PROTOCOL:
            .badResponse
        default: .other
        }
    }
}
