public import Foundation

extension HTTPClient {
    /// How an ``HTTPClient`` builds, sends and checks requests.
    public struct Configuration: Sendable {
        // MARK: Where

        /// The URL every request's path is appended to, e.g. `https://bff.example.com/api`.
        public var baseURL: URL

        // MARK: What is sent

        /// Header fields sent with every request; a request's own fields of the same
        /// name win. The default is `Accept: application/json`.
        public var defaultHeaders: HTTPHeaders = ["Accept": "application/json"]
        /// Encodes `.json` request bodies. The default is a plain `JSONEncoder`.
        public var encoder: JSONEncoder = JSONEncoder()

        // MARK: Limits

        /// The deadline for one request, from sending to the last body byte, unless the
        /// request sets its own. The default is 30 seconds.
        public var timeout: Duration = .seconds(30)
        /// The largest response body accepted, in bytes; `nil` for no limit.
        /// The default is 32 MiB.
        public var maximumResponseSize: Int? = 32 * 1024 * 1024

        // MARK: What is accepted

        /// Statuses that count as success; any other is a
        /// ``HTTPClientError/Code-swift.struct/serverError``. The default is `200..<300`.
        public var acceptedStatusCodes: Range<Int> = 200..<300
        /// Decodes JSON responses. The default is a plain `JSONDecoder`.
        public var decoder: JSONDecoder = JSONDecoder()

        /// Creates a configuration with every default.
        public init(baseURL: URL) {
            self.baseURL = baseURL
        }

        /// Creates a configuration, then lets `configure` adjust it.
        ///
        /// ```swift
        /// let configuration = HTTPClient.Configuration(baseURL: url) { $0.timeout = .seconds(5) }
        /// ```
        public init(baseURL: URL, configure: (inout Configuration) -> Void) {
            self.init(baseURL: baseURL)
            configure(&self)
        }
    }
}
