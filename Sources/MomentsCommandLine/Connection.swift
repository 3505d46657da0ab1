import Foundation
import Moments
import MomentsNetworking
import MomentsCaching
import MomentsBFF

/// What the network commands share: the client, the service and the store, built from
/// `--base-url`, `--store`, `--token`, `--timeout`, `--retries`, `--no-hedge`, `--cache-policy`,
/// `--transport` and `--ca-file`.
struct Connection {
    let baseURL: URL
    let client: HTTPClient
    let persistence: any MomentsPersistence
    let store: MomentsStore
    /// Where refreshes take timelines from (`--cache-policy`; the BFF alone by default).
    let source: TimelineSource

    /// Where cached BFF answers are kept: `$MOMENTS_CACHE_DIR`, else `.moments-cache`.
    static func cacheDirectory(_ environment: [String: String]) -> String {
        environment["MOMENTS_CACHE_DIR"] ?? ".moments-cache"
    }

    static let cachePolicies: [String: TimelineSource] = [
        "remote": .server, "local": .cache, "local-or-remote": .cacheElseServer,
        "local-then-remote": .cacheThenServer, "remote-then-local": .serverElseCache,
    ]

    /// The BFF's base URL: http(s), a host, a valid port; a trailing `/graphql` (the
    /// endpoint itself, as the reference BFF announces it) is accepted and removed.
    static func baseURL(_ text: String) throws(UsageError) -> URL {
        guard var components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
              ["http", "https"].contains(scheme), let host = components.host, !host.isEmpty
        else {
            throw UsageError(message: "--base-url must be an http(s) URL such as http://127.0.0.1:8080, not '\(text)'")
        }
        if let port = components.port, !(1...65_535).contains(port) {
            throw UsageError(message: "--base-url has port \(port); a port is 1 to 65535")
        }
        var path = components.path
        while path.hasSuffix("/") { path.removeLast() }
        if path.hasSuffix("/graphql") { path.removeLast("/graphql".count) }
        components.path = path
        guard let url = components.url else {
            throw UsageError(message: "--base-url must be an http(s) URL such as http://127.0.0.1:8080, not '\(text)'")
        }
        return url
    }

    /// A connection as `arguments` describe it; with `sendsOnce`, for a command that
    /// changes something (`like`, `unlike`), no request is retried or hedged, whatever
    /// `--retries` says.
    init(_ arguments: ParsedArguments, environment: [String: String], sendsOnce: Bool = false) async throws {
        guard let text = arguments.option("base-url") ?? environment["MOMENTS_BASE_URL"] else {
            throw UsageError(message: "no BFF given: pass --base-url URL or set MOMENTS_BASE_URL (or try 'moments demo')")
        }
        let url = try Self.baseURL(text)
        var timeout = Duration.seconds(10)
        if let text = arguments.option("timeout") {
            guard let seconds = Double(text), seconds > 0, seconds <= 3600 else {
                throw UsageError(message: "--timeout must be seconds between 0 and 3600 (e.g. 2.5), not '\(text)'")
            }
            timeout = .milliseconds(Int(seconds * 1000))
        }
        var retries = 1
        if let text = arguments.option("retries") {
            guard let count = Int(text), (0...10).contains(count) else {
                throw UsageError(message: "--retries must be a whole number from 0 to 10, not '\(text)'")
            }
            retries = count
        }
        if sendsOnce { retries = 0 }
        let hedges = !arguments.has("no-hedge") && !sendsOnce
        let location = try arguments.option("store").map { try StoreLocation.parse($0) } ?? .default
        let token = arguments.option("token")
        // The answer cache is used only when a policy asks for it.
        var chosenSource: TimelineSource?
        if let text = arguments.option("cache-policy") {
            guard let source = Self.cachePolicies[text] else {
                throw UsageError(message: "--cache-policy must be one of \(Self.cachePolicies.keys.sorted().joined(separator: ", ")), not '\(text)'")
            }
            chosenSource = source
        }
        source = chosenSource ?? .server
        let transport = try TransportChoice.make(arguments, environment: environment)
        var cache: DiskResponseCache?
        if chosenSource != nil { cache = try await DiskResponseCache.open(directory: URL(fileURLWithPath: Self.cacheDirectory(environment))) }
        baseURL = url
        client = HTTPClient(baseURL: url, transport: transport) {
            $0.timeout = timeout
            $0.retryPolicy = retries > 0 ? RetryPolicy(maximumAttempts: retries + 1, initialDelay: .milliseconds(200)) : nil
            if !hedges { $0.hedging = nil }
            if let cache, let chosenSource {
                $0.cache = TieredResponseCache(memory: MemoryResponseCache(), disk: cache)
                $0.cachePolicy = CachePolicy(chosenSource)
            }
            if let token { $0.authentication = AuthenticationMiddleware(provider: StaticTokenProvider(token)) }
            $0.logHandler = Observing.current.requestLog
            $0.metrics = Observing.current.metrics
        }
        let (persistence, changeBus) = try await location.open()
        self.persistence = persistence
        store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence, configuration: .init {
            $0.changeBus = changeBus
            $0.metrics = Observing.current.metrics
        })
    }

    /// Shuts the store down (its last writes finished, its streams ended, its storage
    /// closed), then the client: within a second, as a command stopped by an interrupt
    /// must be.
    func shutdown() async {
        await store.shutdown(gracePeriod: .milliseconds(500))
        await client.shutdown(gracePeriod: .milliseconds(250))
    }

    /// Runs `body`, then shuts down, whether `body` returned or threw: a one-shot
    /// command's writes are finished and its storage closed before it exits.
    func run<T>(_ body: () async throws -> T) async throws -> T {
        do {
            let result = try await body()
            await shutdown()
            return result
        } catch {
            await shutdown()
            throw error
        }
    }
}
