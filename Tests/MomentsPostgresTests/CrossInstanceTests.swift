import Foundation
import Moments
import MomentsNetworking
import MomentsPostgres
import MomentsTestSupport
import Testing
import MomentsBFF

/// Several stores on one PostgreSQL database stand in for instances of a service behind
/// a load balancer, each with its own `PostgresPersistence` and HTTP client, all talking
/// to one reference BFF.
@Suite(.serialized) struct CrossInstanceTests {
    struct Instance {
        let persistence: PostgresPersistence
        let store: MomentsStore
    }

    static func instances(_ count: Int, bff: ReferenceBFF, connectionString: String) async throws -> [Instance] {
        var instances: [Instance] = []
        for _ in 0..<count {
            let persistence = try await PostgresPersistence(connectionString: connectionString)
            let service = GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) {
                $0.timeout = .seconds(10)
            })
            let store = MomentsStore(service: service, persistence: persistence, configuration: .init { $0.changeBus = persistence })
            instances.append(Instance(persistence: persistence, store: store))
        }
        return instances
    }

    /// Whether `userID` likes `momentID` in `details`, by its likes.
    static func likes(_ details: MomentsDetails?, _ momentID: String, by userID: String) -> Bool? {
        details?.moments.first { $0.id == momentID }?.likes.map { likes in likes.contains { $0.id == userID } }
    }

    /// The connection between one instance and the database goes silent (a proxy in
    /// between stops forwarding and never closes: what a NAT or load balancer that
    /// forgot the connection does). With no other traffic, the instance notices within
    /// its heartbeat's bound, reconnects, says it is behind, re-reads what it holds, and
    /// converges with the change the other instance committed meanwhile. Another
    /// instance's removal of a timeline is forgotten there too.
    @Test func anInstanceWhoseConnectionWentSilentConvergesWithinTheHeartbeatsBound() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let control = directory.url.appendingPathComponent("proxy-control")
        let proxy = try await ScriptServer(script: "Tools/fixture-server/silent_proxy.py", arguments: ["127.0.0.1", "\(server.port)", control.path])
        defer { proxy.stop() }
        let viaProxy = database.replacingOccurrences(of: "port=\(server.port)", with: "port=\(proxy.port)")
        #expect(viaProxy != database)

        func client() -> GraphQLMomentsService {
            GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()) { $0.timeout = .seconds(10) })
        }
        let writer = try await PostgresPersistence(connectionString: database)
        let writingStore = MomentsStore(service: client(), persistence: writer, configuration: .init { $0.changeBus = writer })
        let reader = try await PostgresPersistence(connectionString: viaProxy, configuration: .init {
            $0.heartbeatInterval = .milliseconds(500)
            $0.heartbeatTimeout = .seconds(1)
            $0.answerTimeout = .seconds(2)
        })
        let readingEvents = StoreEventLog()
        let readingStore = MomentsStore(service: client(), persistence: reader, configuration: .init {
            $0.changeBus = reader
            $0.observer = readingEvents.observer
        })
        try await writingStore.refresh(userID: "1")
        try await readingStore.refresh(userID: "1")
        try await readingStore.refresh(userID: "2")
        let probe = StreamProbe(await readingStore.updates(for: "1"))
        let feed = StreamProbe(readingStore.changes())
        // The writer's refresh was announced and read: the reader's connection is idle,
        // so only its heartbeat can find it silent.
        await readingEvents.waitUntilSharedEventsApplied(1)

        try Data("silent".utf8).write(to: control)
        #expect(await eventually { !FileManager.default.fileExists(atPath: control.path) }, "the proxy went silent")
        let silentSince = ContinuousClock.now
        try await writingStore.setLike(true, momentID: "2", userID: "1")

        let seen = await probe.waitUntil(timeout: .seconds(30)) { Self.likes($0, "2", by: "1") == true }
        let took = ContinuousClock.now - silentSince
        #expect(Self.likes(seen, "2", by: "1") == true, "the reading instance never saw the like committed while its connection was silent")
        // Found by the heartbeat (0.5 s + 1 s), a fresh connection, the re-read (a
        // pooled connection answers within 2 s or is replaced): well within 10 s.
        #expect(took < .seconds(10), "took \(took)")
        #expect(feed.values.contains { if case .sharedChangesInterrupted = $0.kind { true } else { false } }, "the feed said it was behind")
        #expect(reader.changeFeedInterruptions >= 1)

        // A removal on the writer is forgotten by the reader.
        try await writer.remove(userID: "2")
        #expect(await eventually { await readingStore.timelinesInMemory == 1 }, "the reader still holds the removed timeline")
    }

    @Test func aLikeOnOneInstanceReachesTheOthersSubscribers() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let database = try await PostgresServer.shared().createDatabase()
        let instances = try await Self.instances(3, bff: bff, connectionString: database)
        // Every instance holds user 1's timeline, which shares moment 2 with user 0's.
        var probes: [StreamProbe<MomentsDetails>] = []
        var feeds: [StreamProbe<MomentsChange>] = []
        for instance in instances {
            try await instance.store.refresh(userID: "1")
            probes.append(StreamProbe(await instance.store.updates(for: "1")))
            feeds.append(StreamProbe(instance.store.changes()))
        }
        #expect(Self.likes(try await instances[1].store.details(for: "1"), "2", by: "1") == false)

        try await instances[0].store.setLike(true, momentID: "2", userID: "1")

        for (index, probe) in probes.enumerated().dropFirst() {
            let seen = await probe.waitUntil { Self.likes($0, "2", by: "1") == true }
            #expect(Self.likes(seen, "2", by: "1") == true, "instance \(index)'s subscriber never saw the like made on instance 0")
            let change = await feeds[index].waitForAny { change in
                if case .moment(let update) = change.kind { update.moment.id == "2" && update.moment.likes?.contains { $0.id == "1" } == true } else { false }
            }
            #expect(change != nil, "instance \(index)'s change feed never carried the like")
        }
        // Applied, not written back: the instances did not echo the change to each other.
        #expect(await instances[0].store.confirmedMoments["2"]?.likes?.contains { $0.id == "1" } == true)
    }

    @Test func anInstanceDoesNotReceiveItsOwnChanges() async throws {
        let database = try await PostgresServer.shared().createDatabase()
        let first = try await PostgresPersistence(connectionString: database)
        let second = try await PostgresPersistence(connectionString: database)
        let firstEvents = StreamProbe(first.sharedChanges())
        let secondEvents = StreamProbe(second.sharedChanges())
        // Both listen once created: each save after this reaches the other.
        try await first.save(SampleTimelines.timeline(user: "a", moments: 2, version: 1), for: "a")
        let received = await secondEvents.waitFor(count: 1).first
        guard case .committed(let commit)? = received else {
            Issue.record("the second instance received \(String(describing: received))")
            return
        }
        #expect(commit.timelines.map(\.userID) == ["a"])
        #expect(Set(commit.moments.map(\.moment.id)) == Set(SampleTimelines.timeline(user: "a", moments: 2, version: 1).moments.map(\.id)))

        try await second.save(SampleTimelines.timeline(user: "b", moments: 1, version: 1), for: "b")
        let firstReceived = await firstEvents.waitFor(count: 1)
        guard case .committed(let other)? = firstReceived.first else {
            Issue.record("the first instance received \(firstReceived)")
            return
        }
        // Its own save was not delivered before the other's.
        #expect(other.timelines.map(\.userID) == ["b"])
    }

    @Test(arguments: [11, 22, 33] as [UInt64])
    func concurrentLikesOfOneMomentFromEveryInstanceConvergeToTheBFF(seed: UInt64) async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let database = try await PostgresServer.shared().createDatabase()
        let instances = try await Self.instances(3, bff: bff, connectionString: database)
        let users = ["0", "1", "2", "3"]
        var subscriptions: [[StreamProbe<MomentsDetails>]] = []
        for instance in instances {
            var probes: [StreamProbe<MomentsDetails>] = []
            for user in users {
                try await instance.store.refresh(userID: user)
                probes.append(StreamProbe(await instance.store.updates(for: user)))
            }
            subscriptions.append(probes)
        }
        var generator = SeededGenerator(seed: seed)
        for round in 0..<12 {
            let calls = (0..<Int.random(in: 2...5, using: &generator)).map { _ in
                (instance: Int.random(in: 0..<instances.count, using: &generator), user: users.randomElement(using: &generator) ?? "0",
                 isLiked: Bool.random(using: &generator))
            }
            await withTaskGroup(of: Void.self) { group in
                for call in calls {
                    let store = instances[call.instance].store
                    group.addTask { _ = try? await store.setLike(call.isLiked, momentID: "0", userID: call.user) }
                }
            }
            // What the BFF holds now, and every instance's subscribers must come to.
            let truth = try await GraphQLMomentsService(client: HTTPClient.patient(baseURL: bff.baseURL, transport: URLSessionTransport()))
                .getMoments(userID: "0").moments.first { $0.id == "0" }?.likes.map { Set($0.map(\.id)) }
            for (index, probes) in subscriptions.enumerated() {
                for (userIndex, probe) in probes.enumerated() {
                    let seen = await probe.waitUntil { details in
                        details.moments.first { $0.id == "0" }?.likes.map { Set($0.map(\.id)) } == truth
                    }
                    let likers = seen?.moments.first { $0.id == "0" }?.likes.map { Set($0.map(\.id)) }
                    #expect(likers == truth, "seed \(seed), round \(round): instance \(index), user \(users[userIndex]) shows \(String(describing: likers)); the BFF holds \(String(describing: truth))")
                }
            }
        }
    }

    @Test func aLostDatabaseConnectionIsMarkedAndResynchronised() async throws {
        let bff = try await ReferenceBFF()
        defer { bff.stop() }
        let server = try await PostgresServer.shared()
        let database = try await server.createDatabase()
        let name = try #require(database.split(separator: " ").first { $0.hasPrefix("dbname=") }?.dropFirst("dbname=".count))
        let instances = try await Self.instances(2, bff: bff, connectionString: database)
        for instance in instances { try await instance.store.refresh(userID: "1") }
        let feed = StreamProbe(instances[1].store.changes())
        let subscriber = StreamProbe(await instances[1].store.updates(for: "1"))
        let interruptionsBefore = instances[1].persistence.changeFeedInterruptions

        try await server.terminateConnections(to: String(name))
        try await instances[0].store.setLike(true, momentID: "0", userID: "1")

        let marker = await feed.waitForAny { if case .sharedChangesInterrupted = $0.kind { true } else { false } }
        #expect(marker.map { if case .sharedChangesInterrupted = $0.kind { true } else { false } } == true,
                "no gap marker after the connection was killed: \(feed.values.map(\.description))")
        #expect(instances[1].persistence.changeFeedInterruptions > interruptionsBefore)
        let seen = await subscriber.waitUntil { Self.likes($0, "0", by: "1") == true }
        #expect(Self.likes(seen, "0", by: "1") == true, "the like made while the feed was down never arrived")
    }
}
