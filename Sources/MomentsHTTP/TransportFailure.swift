/// Why a transport produced no usable answer.
public struct TransportFailure: Sendable, Hashable, CustomStringConvertible {
    /// The kind of transport failure.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// Nothing listened at the address, or it refused the connection.
        public static let connectionRefused = Kind("connection refused")
        /// The connection was reset or closed before the answer was complete.
        public static let connectionReset = Kind("connection reset")
        /// The host name could not be resolved.
        public static let hostNotFound = Kind("host not found")
        /// The request did not finish within its deadline.
        public static let timedOut = Kind("timed out")
        /// The body ended before the length the server announced.
        public static let truncatedResponse = Kind("truncated response")
        /// The machine has no network.
        public static let notConnected = Kind("not connected")
        /// The TLS handshake or certificate check failed.
        public static let secureConnectionFailed = Kind("secure connection failed")
        /// The server's answer was not valid HTTP.
        public static let badResponse = Kind("bad server response")
        /// Nothing of the request left the process: the transport knows the server
        /// cannot have acted on it, so sending it again is safe, even for a request that
        /// changes something.
        public static let requestNotSent = Kind("request not sent")
        /// Anything else.
        public static let other = Kind("other")

        /// A one-line description, for logs and messages.
        public var description: String { name }
    }

    /// The kind of failure.
    public let kind: Kind
    /// What the platform reported, without any request header or body.
    public let message: String

    /// Whether the server may have received the request, or part of it: `false` only for
    /// failures that come before anything is sent (nothing listened, the host has no
    /// address, the machine has no network, the TLS handshake failed, or the transport
    /// knows nothing was sent). A request that is not repeatable is never sent again
    /// after a failure that may have reached the server.
    public var mayHaveReachedServer: Bool {
        switch kind {
        case .connectionRefused, .hostNotFound, .notConnected, .secureConnectionFailed, .requestNotSent: false
        default: true
        }
    }

    /// A failure of `kind`, with the platform's `message`.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        message.isEmpty ? kind.description : "\(kind): \(message)"
    }
}
