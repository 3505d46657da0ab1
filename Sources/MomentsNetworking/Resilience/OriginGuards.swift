import Foundation
import MomentsSupport

/// The ``OriginGuard`` of every origin a client has talked to: the one it was made for,
/// and any a redirect led to. Each origin's breaker, retry budget and latency answer for
/// that origin alone: a failing origin reached through a redirect opens its own breaker,
/// not the client's.
final class OriginGuards: Sendable {
    /// The origin of the client's base URL.
    let base: OriginGuard
    private let baseKey: OriginKey
    private let make: @Sendable () -> OriginGuard
    private let others = PThreadMutex<[OriginKey: OriginGuard]>([:])
    /// Origins other than the base one that are remembered; beyond, the oldest is forgotten.
    private let limit = 64

    init(baseURL: URL, make: @escaping @Sendable () -> OriginGuard) {
        self.make = make
        base = make()
        baseKey = OriginKey(baseURL)
    }

    /// The guard of `url`'s origin.
    func guardian(for url: URL) -> OriginGuard {
        let key = OriginKey(url)
        if key == baseKey { return base }
        return others.withLock { others in
            if let known = others[key] { return known }
            if others.count >= limit, let evicted = others.keys.first { others[evicted] = nil }
            let made = make()
            others[key] = made
            return made
        }
    }
}

/// An origin: scheme, host and port (RFC 6454), compared without case.
struct OriginKey: Hashable, Sendable {
    let scheme: String
    let host: String
    let port: Int

    init(_ url: URL) {
        scheme = url.scheme?.lowercased() ?? ""
        host = url.host?.lowercased() ?? ""
        port = url.port ?? (scheme == "https" ? 443 : 80)
    }
}
