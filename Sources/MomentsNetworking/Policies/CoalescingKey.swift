import Foundation
import MomentsHTTP

/// Identifies identical requests exactly, as the transport would send them: same
/// method, URL, body bytes and identity (the credentials, as a keyed digest).
struct CoalescingKey: Hashable, Sendable {
    let method: HTTPMethod
    let url: URL
    let body: Data?
    let streamedBody: StreamedBody?
    let identity: RequestIdentity

    init(_ request: HTTPRequest, identity: RequestIdentity) {
        method = request.method
        url = request.url
        body = request.body
        streamedBody = request.streamedBody
        self.identity = identity
    }
}
