import Foundation
import Moments
import MomentsCurl
import MomentsHTTP
import MomentsNetworking
import MomentsSQLite
import MomentsSupport
import MomentsTestSupport
import Testing
import MomentsBFF

/// A store and a client run as services of a (stand-in) `ServiceGroup`, shut down
/// gracefully in the middle of a load; and the article's code is the code compiled here.
@Suite struct ServiceLifecycleTests {
    static let article = ArticleCode.root.appendingPathComponent("Sources/Moments/Moments.docc/RunningAsAService.md")
    static let adapters = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ServiceLifecycleAdapters.swift")

    @Test func everyCodeBlockOfTheArticleIsCompiledHere() throws {
        let (missing, count) = try ArticleCode.blocksMissing(from: Self.adapters, article: Self.article)
        #expect(count >= 3, "the article shows the conformances, the group and the shutdown without a library")
        #expect(missing.isEmpty, "not in ServiceLifecycleAdapters.swift:\n\(missing.joined(separator: "\n---\n"))")
    }

    /// One user's calls, one at a time: what each like returned, and how the calls ended.
    private struct UserLoad: Sendable {
        var confirmed: [String: Bool] = [:]
        var succeeded = 0
        var refused = 0
        var untyped: [String] = []
    }

    @Test func aGracefulShutdownMidLoadEndsEveryCallAndStreamAndLeavesTheFileWhole() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        // Half the answers take 0.2 s: the shutdown comes with calls at the BFF.
        try await bff.injectFault(["kind": "slow", "seconds": 0.2, "rate": 0.5, "seed": 7])
        // The fault was set through the test's own connection to the BFF: the store's are
        // counted beside it.
        let connectionsBefore = try Self.establishedConnections(toPort: bff.port)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.url.appendingPathComponent("store.sqlite").path
        let transport = try CurlTransport()
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: transport) { $0.timeout = .seconds(30) }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: try SQLitePersistence(path: path))
        let group = ServiceGroup(
            services: [StoppingGracefully(wrapped: client), StoppingGracefully(wrapped: store)],
            gracefulShutdownSignals: [.sigterm], logger: Logger(label: "moments.lifecycle")
        )
        let running = Task { try await group.run() }
        let users = ["0", "1", "2", "3"]
        for user in users { try await store.refresh(userID: user) }

        // Subscribers, each reading until its stream ends.
        var subscribers: [String: Task<[MomentsDetails], Never>] = [:]
        for user in users {
            let stream = await store.updates(for: user)
            subscribers[user] = Task { await stream.reduce(into: []) { $0.append($1) } }
        }
        // Load: each user likes, unlikes and refreshes, one call at a time, until refused.
        let returned = AsyncStream<Void>.makeStream()
        let loads = users.enumerated().map { index, user in
            Task {
                var load = UserLoad()
                var generator = SeededGenerator(seed: UInt64(index + 1))
                let moments = ["0", "1", "2", "3"]
                while true {
                    do {
                        if Int.random(in: 0..<4, using: &generator) == 0 {
                            try await store.refresh(userID: user)
                        } else {
                            let moment = moments.randomElement(using: &generator) ?? "0"
                            let isLiked = Bool.random(using: &generator)
                            let details = try await store.setLike(isLiked, momentID: moment, userID: user)
                            load.confirmed[moment] = details.moment(withID: moment)?.isLiked
                        }
                        load.succeeded += 1
                        returned.continuation.yield()
                    } catch let error as MomentsStoreError where error.code == .shutDown {
                        load.refused += 1
                        return load
                    } catch let error as HTTPClientError {
                        // Typed; a like that failed is taken back, and its register is what the server says.
                        load.untyped += error.code == .shutDown || error.code == .cancelled ? [] : ["\(error)"]
                        returned.continuation.yield()
                    } catch {
                        load.untyped.append("\(type(of: error)): \(error)")
                        return load
                    }
                }
            }
        }
        // Mid-load: once 40 calls have returned.
        var count = 0
        for await _ in returned.stream {
            count += 1
            if count == 40 { break }
        }
        let started = ContinuousClock.now
        await group.triggerGracefulShutdown()
        try await running.value
        let took = ContinuousClock.now - started

        #expect(await group.endOrder == [1, 0], "the store (listed last) stopped first, then the client")
        #expect(took < .seconds(10), "within the store's default grace period: \(took)")
        #expect(try Self.openFiles().contains(path) == false, "the store closed its database")
        var loadsByUser: [String: UserLoad] = [:]
        for (index, load) in loads.enumerated() { loadsByUser[users[index]] = await load.value }
        let persistence = try SQLitePersistence(path: path)
        for user in users {
            let load = try #require(loadsByUser[user])
            #expect(load.refused == 1 && load.untyped.isEmpty, "user \(user): every call ended, each failure typed: \(load.untyped)")
            let streamed = try #require(await subscribers[user]?.value)
            let saved = try #require(try await persistence.load(userID: user))
            #expect(streamed.last == saved, "user \(user): the stream ended with the state on disk")
            for (moment, isLiked) in load.confirmed {
                #expect(saved.moment(withID: moment)?.isLiked == isLiked, "user \(user), moment \(moment): the confirmed like is on disk")
            }
        }
        // Nothing is left open: the transport's thread, its connections, the database.
        #expect(transport.hasEnded)
        #expect(transport.requestsInFlight == 0)
        #expect(try Self.establishedConnections(toPort: bff.port) <= connectionsBefore, "the client's connections are closed")
        await persistence.close()
    }

    /// This process's TCP connections to `port` on loopback that are established.
    private static func establishedConnections(toPort port: Int) throws -> Int {
        let table = try String(contentsOfFile: "/proc/self/net/tcp", encoding: .utf8)
        let remote = String(format: ":%04X", port)
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2].hasSuffix(remote) && fields[3] == "01"
        }.count
    }

    /// The paths this process has open.
    private static func openFiles() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap {
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")
        }
    }
}
