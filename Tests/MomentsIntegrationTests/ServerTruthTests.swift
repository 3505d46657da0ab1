import Foundation
import Moments
import MomentsNetworking
import MomentsSQLite
import MomentsTestSupport
import Testing
import MomentsBFF

/// The store shows what the server said, per viewer where the value is per viewer, and
/// a user's like in flight to that user alone, against the reference BFF in both of
/// its `isLiked` models.
@Suite(.serialized) struct ServerTruthTests {
    /// Users whose timelines share moments "0" and "2": the sample users, and a
    /// generated one whose timeline also lists "0".
    static let users = ["0", "1", "2", "3", "user-1"]

    private static func store(_ bff: ReferenceBFF) -> (MomentsStore, InMemoryPersistence) {
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(20) }
        let persistence = InMemoryPersistence()
        return (MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence), persistence)
    }

    /// 500 likes and unlikes from five users over the moments they share, at once; after
    /// every call returned and a final refresh of each user, the store, its persistence
    /// and each user's last snapshot show each user's timeline exactly as the server
    /// answers it, `isLiked` included, in both of the server's models.
    @Test(arguments: [false, true])
    func concurrentLikesOfSharedMomentsEndInTheServersAnswerForEveryUser(globalIsLiked: Bool) async throws {
        let bff = try await ReferenceBFF(users: 1, momentsPerUser: 2, globalIsLiked: globalIsLiked)
        defer { bff.stop() }
        let (store, persistence) = Self.store(bff)
        var probes: [String: StreamProbe<MomentsDetails>] = [:]
        for user in Self.users {
            try await store.refresh(userID: user)
            probes[user] = StreamProbe(await store.updates(for: user))
        }
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        let calls: [(user: String, moment: String, isLiked: Bool)] = (0..<500).map { _ in
            let user = Self.users.randomElement(using: &generator) ?? "0"
            let moment = user == "user-1" ? "0" : ["0", "2"].randomElement(using: &generator) ?? "0"
            return (user, moment, Bool.random(using: &generator))
        }
        await withTaskGroup(of: Void.self) { group in
            for call in calls {
                group.addTask { _ = try? await store.setLike(call.isLiked, momentID: call.moment, userID: call.user) }
            }
        }
        await store.waitUntilIdle()
        for user in Self.users { try await store.refresh(userID: user) }
        await store.waitUntilIdle()

        let server = GraphQLMomentsService(baseURL: bff.baseURL)
        for user in Self.users {
            let truth = try await server.getMoments(userID: user)
            let held = try await store.details(for: user)
            #expect(held == truth, "seed \(seed), \(globalIsLiked ? "global" : "per-viewer") isLiked, user \(user): store \(Self.summary(held)) ≠ server \(Self.summary(truth))")
            #expect(await persistence.load(userID: user) == truth, "seed \(seed), user \(user): persisted")
            #expect(await probes[user]?.waitUntil { $0 == truth } == truth, "seed \(seed), user \(user): last snapshot")
        }
    }

    /// One user's concurrent likes of different moments, against a BFF of each `isLiked`
    /// model, SQLite underneath: every successful `setLike` returns its own moment in the
    /// state it set, and once every call of a round has returned (no waiting for the
    /// store to settle), the store, its file and its stream all show the server's
    /// timeline. A round's likes overlap each other's answers, as real calls do.
    @Test(arguments: [false, true])
    func everyConcurrentLikeReturnsItsOwnStateAndEachRoundEndsAtTheServer(globalIsLiked: Bool) async throws {
        let bff = try await ReferenceBFF(users: 1, momentsPerUser: 6, globalIsLiked: globalIsLiked)
        defer { bff.stop() }
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persistence = try SQLitePersistence(path: directory.url.appendingPathComponent("store.sqlite").path)
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(60) }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: persistence)
        let user = "user-1"
        let moments = try await store.refresh(userID: user).moments.map(\.id)
        let probe = StreamProbe(await store.updates(for: user))
        let server = GraphQLMomentsService(baseURL: bff.baseURL)
        let seed = UInt64.random(in: 0...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        var wrongReturns: [String] = []
        for round in 0..<60 {
            let count = Int.random(in: 2...4, using: &generator)
            let calls = moments.shuffled(using: &generator).prefix(count).map { ($0, Bool.random(using: &generator)) }
            let returned = await withTaskGroup(of: (String, Bool, Bool?).self) { group in
                for (moment, isLiked) in calls {
                    group.addTask {
                        let details = try? await store.setLike(isLiked, momentID: moment, userID: user)
                        return (moment, isLiked, details?.moment(withID: moment)?.isLiked)
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
            for (moment, isLiked, shown) in returned where shown != isLiked {
                wrongReturns.append("round \(round): setLike(\(isLiked), \(moment)) returned \(String(describing: shown))")
            }
            let truth = try await server.getMoments(userID: user)
            let held = try await store.details(for: user)
            #expect(held == truth, "seed \(seed), round \(round): store ≠ server")
            #expect(try await persistence.load(userID: user) == truth, "seed \(seed), round \(round): file ≠ server")
            #expect(await probe.waitUntil { $0 == truth } == truth, "seed \(seed), round \(round): stream")
            if held != truth { break }
        }
        #expect(wrongReturns.isEmpty, "seed \(seed): \(wrongReturns.prefix(5))")
    }

    /// A like that fails, whatever the fault, is never shown to another user: user 1's
    /// stream and user 1's part of the change feed stay still while user 0's like of a
    /// moment both timelines hold is in flight and rolled back. Unless the server applied
    /// it before the fault (a cut or lost answer): then the store's settling read shows
    /// the server's moment, and that is all user 1 may see of it.
    @Test(arguments: [
        ["kind": "slow", "seconds": 5], ["kind": "status", "status": 500], ["kind": "status", "status": 503],
        ["kind": "status", "status": 401], ["kind": "malformed"], ["kind": "truncated"], ["kind": "reset", "count": 3],
        ["kind": "empty"], ["kind": "graphqlError"], ["kind": "large", "bytes": 2_000_000],
    ] as [[String: any Sendable]])
    func aFailedLikeIsNeverShownToAnotherUser(fault: [String: any Sendable]) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        // The BFF's first answers, before the 1 s deadline the slow fault needs: a BFF
        // started beside compilers may take longer over them.
        let warm = GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL))
        for user in ["0", "1"] { _ = try await warm.getMoments(userID: user) }
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
            $0.timeout = .seconds(1)
            $0.maximumResponseSize = 512 * 1024
        }
        let store = MomentsStore(service: GraphQLMomentsService(client: client), persistence: InMemoryPersistence())
        try await store.refresh(userID: "0")
        let before = try await store.refresh(userID: "1")
        let other = StreamProbe(await store.updates(for: "1"))
        #expect(await other.waitFor(count: 1) == [before])
        let feed = StreamProbe(store.changes())

        try await bff.injectFault(fault)
        // Moment "0": user 1's timeline holds it too; user 0 does not like it yet.
        await #expect(throws: (any Error).self, "\(fault)") { try await store.setLike(true, momentID: "0", userID: "0") }
        let afterFailure = store.lastChangeSequence
        try await bff.clearFaults()
        let truth = try await GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL)).getMoments(userID: "1")
        var settled = before
        settled.moments = before.moments.map { $0.id == "0" ? (truth.moment(withID: "0") ?? $0) : $0 }
        /// Who user 1 may see liking moment "0": as before the like, or as the server holds it.
        func allowed(_ moment: Moment) -> Bool {
            moment.likes == before.moment(withID: "0")?.likes || moment.likes == truth.moment(withID: "0")?.likes
        }
        // A change user 1 does see, to know everything before it was delivered. (Its
        // answer may carry user 0's like, if the server applied it before the fault.)
        let marker = try await store.setLike(true, momentID: "2", userID: "1")
        #expect(await other.waitUntil { $0 == marker } == marker, "\(fault)")

        let untilMarker = other.values.prefix { $0.moment(withID: "2") == before.moment(withID: "2") }
        #expect(untilMarker.allSatisfy { $0 == before || $0 == settled }, "\(fault): user 1 saw user 0's failed like: \(untilMarker.map(Self.summary))")
        // Everything up to the failure has been delivered once a change numbered at least
        // that far has (the marker's changes come after it).
        #expect(await feed.waitForAny { $0.sequence >= afterFailure } != nil, "\(fault): the feed stopped")
        let seenByOne = feed.values.filter { change in
            guard change.sequence <= afterFailure, case .moment(let update) = change.kind else { return false }
            return update.holders.contains("1") && !allowed(update.moment(for: "1"))
        }
        #expect(seenByOne.isEmpty, "\(fault): \(seenByOne)")
        #expect(feed.values.contains { $0.sequence <= afterFailure && $0.userIDs == ["0"] }, "user 0 saw the like and its rollback")
    }

    private static func summary(_ details: MomentsDetails?) -> String {
        details?.moments.map { "\($0.id)\($0.isLiked == true ? "*" : "")[\(($0.likes ?? []).map(\.id).joined(separator: ","))]" }.joined(separator: " ") ?? "nil"
    }
}
