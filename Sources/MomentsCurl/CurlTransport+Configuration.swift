extension CurlTransport {
    /// How a ``CurlTransport`` connects: trust, identity, proxies, connection limits,
    /// compression and protocol version. Every property has a stated default; a
    /// configuration is fixed when the transport is created.
    public struct Configuration: Sendable {
        /// A PEM file of certificate authorities to trust instead of the system's bundle.
        /// The default, `nil`, trusts the system's authorities.
        public var certificateAuthorityFile: String?
        /// A directory of hashed PEM certificate authorities (`openssl rehash`) to trust
        /// in addition to ``certificateAuthorityFile``. The default is `nil`.
        public var certificateAuthorityDirectory: String?
        /// The certificate and key this client presents when a server asks for one.
        /// The default, `nil`, presents none.
        public var clientCertificate: ClientCertificate?
        /// The server's public key the connection must present, in libcurl's form:
        /// `sha256//BASE64[;sha256//BASE64…]`, or the path of a PEM or DER public key.
        /// A mismatch fails the exchange as a secure-connection failure. The default,
        /// `nil`, pins nothing.
        public var pinnedPublicKey: String?
        /// Which proxy requests go through. The default, ``Proxy/none``, connects
        /// directly and ignores `http_proxy` and friends in the environment.
        public var proxy: Proxy = .none
        /// Host names (and domains, and addresses) reached directly even when a proxy is
        /// set, as libcurl's no-proxy list; `*` matches every host. The default is empty.
        public var noProxy: [String] = []
        /// Requests in flight at once to one origin (scheme, host and port), each on a
        /// connection of its own over HTTP/1.1; further requests to that origin wait in
        /// the transport, in order, their deadline running, and start the moment one of
        /// its requests ends. `0` for no limit. The default is 8.
        public var maximumConnectionsPerHost: Int = 8
        /// Requests in flight at once in all, waiting as above; `0` for no limit but the
        /// per-origin one. The default is 0.
        public var maximumConnections: Int = 0
        /// The deadline for establishing a connection (TCP and TLS). The request's own
        /// deadline still bounds the whole exchange. The default is 10 seconds.
        public var connectTimeout: Duration = .seconds(10)
        /// Whether requests offer every compression libcurl can decode (gzip, deflate and
        /// what else it was built with) and answers are decoded transparently. The
        /// default is `true`. A request that sets `Accept-Encoding` itself gets exactly
        /// what it asked for, undecoded.
        public var acceptsCompressedResponses: Bool = true
        /// The HTTP version to ask for. The default is ``HTTPVersionPreference/http2``.
        public var preferredHTTPVersion: HTTPVersionPreference = .http2
        /// How many bytes of large answers' memory (bodies of 64 KiB and more) the
        /// transport keeps, once callers release the answers, to gather later answers
        /// in. Fresh memory for every large answer costs page faults that outweigh the
        /// copy filling it; a body never shows another's bytes. `0` keeps none. The
        /// default is 32 MiB, held only after answers that large have come and gone.
        public var reusableBodyMemory: Int = 32 << 20
        /// How long the transport's thread watches, without sleeping, for what a caller
        /// sending one request at a time waits on: with its request in flight, the
        /// answer; after answering it, its next request. Sleeping and being woken
        /// instead costs thread switches (tens of microseconds on a virtual machine),
        /// often more than a nearby server takes to answer. Watching spends CPU for at
        /// most this long, and only while it pays: each watch that catches nothing
        /// doubles how many idle moments are then slept through without one (up to
        /// 1,024), so against a slow server or an idle caller it soon costs nothing.
        /// With several requests in flight the thread never watches: it seldom idles
        /// then, and the CPU belongs to the callers. `.zero` never watches. The
        /// default is 50 microseconds.
        public var busyPollWindow: Duration = .microseconds(50)

        /// Creates a configuration with every default.
        public init() {}
    }

    /// A certificate (and its private key) the client presents for mutual TLS.
    public struct ClientCertificate: Sendable, Hashable {
        /// The path of the PEM certificate (it may hold the key too).
        public var certificateFile: String
        /// The path of the PEM private key; `nil` when the certificate file holds it.
        public var keyFile: String?
        /// The pass phrase of an encrypted key, if it has one.
        public var keyPassword: String?

        /// Creates a client certificate from files.
        public init(certificateFile: String, keyFile: String? = nil, keyPassword: String? = nil) {
            self.certificateFile = certificateFile
            self.keyFile = keyFile
            self.keyPassword = keyPassword
        }
    }

    /// Which proxy a transport's requests go through.
    public enum Proxy: Sendable, Hashable {
        /// Connect directly; the environment's proxy variables are ignored.
        case none
        /// The proxy at this URL (`http://host:port`, `https://…`, `socks5h://…`;
        /// credentials may be part of the URL).
        case url(String)
        /// Whatever `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy` say, as
        /// libcurl reads them.
        case environment
    }

    /// The HTTP version a transport asks for.
    public enum HTTPVersionPreference: Sendable, Hashable {
        /// HTTP/1.1 on every connection.
        case http1_1
        /// HTTP/2 where TLS negotiates it (ALPN), HTTP/1.1 otherwise, including every
        /// cleartext connection.
        case http2
    }
}
