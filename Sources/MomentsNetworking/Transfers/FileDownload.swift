public import Foundation

/// A `GET` whose answer is written to a file as it arrives, never held in memory: a
/// large download. It decodes to the file's URL.
///
/// For example:
/// ```swift
/// let file = try await client.send(FileDownload(path: "/exports/\(segment: id)", to: destination))
/// ```
///
/// The client's `maximumResponseSize` and the deadline apply to it; a failed download
/// leaves no file behind (an answer with a failure status is reported with the
/// beginning of its body, as any other).
public struct FileDownload: Request {
    public typealias Response = URL

    public var path: String
    public var query: [URLQueryItem]
    public var headers: HTTPHeaders
    public var timeout: Duration?
    public var groups: Set<String>
    /// Where the body is written (created 0600, or truncated).
    public var destination: URL

    /// A download of `path` into `destination`.
    public init(
        path: String, to destination: URL, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
        timeout: Duration? = nil, groups: Set<String> = []
    ) {
        self.path = path
        self.destination = destination
        self.query = query
        self.headers = headers
        self.timeout = timeout
        self.groups = groups
    }

    public var downloadDestination: URL? { destination }
    public var isCacheable: Bool { false }
}
