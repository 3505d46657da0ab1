import Foundation

/// Identifies identical requests exactly: same method, URL and body bytes.
struct CoalescingKey: Hashable, Sendable {
    let method: HTTPMethod
    let url: URL
    let body: Data?

    init(_ request: HTTPRequest) {
        method = request.method
        url = request.url
        body = request.body
    }
}
