public import Foundation
public import MomentsHTTP

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
    /// The answer it decodes to.
    public typealias Response = URL

    /// The path, after the client's base URL.
    public var path: String
    /// The query items.
    public var query: [URLQueryItem]
    /// Header fields, over the client's defaults.
    public var headers: HTTPHeaders
    /// The deadline for the whole download; `nil` uses the client's.
    public var timeout: Duration?
    /// The groups for ``HTTPClient/cancelAll(in:)``.
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

    /// Written to ``destination``, never kept in the response cache, with the
    /// download's ``timeout`` and ``groups``.
    public var options: RequestOptions {
        RequestOptions(timeout: timeout, isCacheable: false, groups: groups, downloadDestination: destination)
    }
}
