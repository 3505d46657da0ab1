import Foundation
import Moments
import MomentsNetworking

/// What the network commands share: the client, the service and the store, built from
/// `--base-url`, `--store`, `--token` and `--timeout`.
struct Connection {
    let baseURL: URL
    let client: HTTPClient
    let persistence: any MomentsPersistence
    let store: MomentsStore

    /// Where cached BFF answers are kept: `$MOMENTS_CACHE_DIR`, else `.moments-cache`.
    static func cacheDirectory(_ environment: [String: String]) -> String {
        environment["MOMENTS_CACHE_DIR"] ?? ".moments-cache"
    }

    init(_ arguments: ParsedArguments, environment: [String: String]) throws {
        guard let text = arguments.option("base-url") ?? environment["MOMENTS_BASE_URL"] else {
            throw UsageError(message: "no BFF given: pass --base-url URL or set MOMENTS_BASE_URL (or try 'moments demo')")
        }
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            throw UsageError(message: "--base-url must be an http(s) URL, not '\(text)'")
        }
        var timeout = Duration.seconds(10)
        if let text = arguments.option("timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw UsageError(message: "--timeout must be a number of seconds, not '\(text)'")
            }
            timeout = .milliseconds(Int(seconds * 1000))
        }
        let location = try arguments.option("store").map { try StoreLocation.parse($0) } ?? .default
        let token = arguments.option("token")
        let cache = try DiskResponseCache(directory: URL(fileURLWithPath: Self.cacheDirectory(environment)))
        baseURL = url
        client = HTTPClient(baseURL: url) {
            $0.timeout = timeout
            $0.retryPolicy = RetryPolicy(maximumAttempts: 2, initialDelay: .milliseconds(200))
            $0.cache = TieredResponseCache(memory: MemoryResponseCache(), disk: cache)
            if let token { $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(token)) }
        }
        persistence = try location.open()
        store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
    }
}
