/// A decoded value together with what is known about the answer it came from.
public struct DecodedResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public let value: Value
    /// The HTTP status of the answer.
    public let statusCode: Int
    /// The header fields of the answer.
    public let headers: HTTPHeaders
    /// The time from sending the request to decoding the answer, measured with a clock.
    public let duration: Duration
    /// Whether the value came from a cache rather than the network.
    public let isFromCache: Bool

    public init(value: Value, statusCode: Int, headers: HTTPHeaders, duration: Duration, isFromCache: Bool = false) {
        self.value = value
        self.statusCode = statusCode
        self.headers = headers
        self.duration = duration
        self.isFromCache = isFromCache
    }
}
