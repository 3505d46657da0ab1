public import Moments

/// The behaviour every ``MomentsPersistence`` must have, written once and run against
/// each implementation by its own test target.
///
/// ```swift
/// @Test(arguments: PersistenceConformance.checks)
/// func conforms(_ check: PersistenceConformance.Check) async throws {
///     try await check.run { try JSONFilePersistence(directory: directory) }
/// }
/// ```
public enum PersistenceConformance {
    /// Opens the implementation under test; called again to "reopen" the same storage.
    public typealias Open = @Sendable () async throws -> any MomentsPersistence

    public struct Check: Sendable, CustomStringConvertible {
        public let description: String
        let body: @Sendable (Open) async throws -> Void

        public func run(_ open: Open) async throws { try await body(open) }
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    static func expect(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Failure(description: message()) }
    }

    /// Expects `body` to fail with ``PersistenceError/Code-swift.struct/invalidInput``.
    static func expectInvalidInput(_ message: String, _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch let error as PersistenceError where error.code == .invalidInput {
            return
        }
        throw Failure(description: message)
    }

    /// Checks that need storage which survives reopening (not for in-memory).
    public static let durableChecks: [Check] = [
        Check(description: "reopen after close keeps every timeline") { open in
            var first: (any MomentsPersistence)? = try await open()
            for index in 0..<5 {
                try await first?.save(SampleTimelines.timeline(user: "u\(index)", moments: index * 3), for: "u\(index)")
            }
            first = nil
            let second = try await open()
            for index in 0..<5 {
                let loaded = try await second.load(userID: "u\(index)")
                try expect(loaded == SampleTimelines.timeline(user: "u\(index)", moments: index * 3), "u\(index) differs after reopening")
            }
            try expect(Set(try await second.userIDs()) == Set((0..<5).map { "u\($0)" }), "userIDs differ after reopening")
        },
    ]

    /// Checks every implementation must pass.
    public static let checks: [Check] = [
        Check(description: "a missing user loads as nil") { open in
            let persistence = try await open()
            try expect(try await persistence.load(userID: "nobody") == nil, "expected nil")
        },
        Check(description: "save then load gives an equal value") { open in
            let persistence = try await open()
            let details = SampleTimelines.timeline(user: "0", moments: 25)
            try await persistence.save(details, for: "0")
            try expect(try await persistence.load(userID: "0") == details, "the loaded timeline differs")
        },
        Check(description: "an empty timeline round-trips") { open in
            let persistence = try await open()
            let details = SampleTimelines.timeline(user: "0", moments: 0)
            try await persistence.save(details, for: "0")
            try expect(try await persistence.load(userID: "0") == details, "the empty timeline differs")
        },
        Check(description: "saving again overwrites") { open in
            let persistence = try await open()
            try await persistence.save(SampleTimelines.timeline(user: "0", moments: 30, version: 1), for: "0")
            let newer = SampleTimelines.timeline(user: "0", moments: 4, version: 2)
            try await persistence.save(newer, for: "0")
            try expect(try await persistence.load(userID: "0") == newer, "the second save did not replace the first")
        },
        Check(description: "a saved moment changes in every timeline holding it, and nothing else does") { open in
            let persistence = try await open()
            let shared = SampleTimelines.moment(id: "shared", index: 1, owner: "a")
            var a = SampleTimelines.timeline(user: "a", moments: 3)
            a.moments.insert(shared.withIsLiked(false), at: 1)
            var b = SampleTimelines.timeline(user: "b", moments: 2)
            b.moments.append(shared.withIsLiked(true))
            try await persistence.save(a, for: "a")
            try await persistence.save(b, for: "b")

            var liked = shared
            liked.likes = (liked.likes ?? []) + [Moment.LikedUser(id: "b", avatar: "https://img/b.jpg")]
            try await persistence.save(PersistenceBatch(moments: [liked]))

            var expectedA = a
            expectedA.moments[1] = liked.withIsLiked(false)
            var expectedB = b
            expectedB.moments[2] = liked.withIsLiked(true)
            try expect(try await persistence.load(userID: "a") == expectedA, "a does not show the saved moment")
            try expect(try await persistence.load(userID: "b") == expectedB, "b does not show the saved moment")
            // Each owner keeps the isLiked saved with their timeline: a moment's save leaves it.
            try expect(Set(try await persistence.userIDs(holding: "shared")) == ["a", "b"], "userIDs(holding:) differs")
        },
        Check(description: "isLiked is each owner's saved value, whatever likes say") { open in
            let persistence = try await open()
            var moment = SampleTimelines.moment(id: "x", index: 0, owner: "a")
            moment.isLiked = false  // contradicts likes, which hold "a"
            let withoutLikes = Moment(id: "y", userDetails: moment.userDetails, type: .url, createdDate: "1", isLiked: true, likes: nil)
            let details = MomentsDetails(userDetails: SampleTimelines.timeline(user: "a", moments: 0).userDetails, moments: [moment, withoutLikes])
            try await persistence.save(details, for: "a")
            let loaded = try await persistence.load(userID: "a")
            try expect(loaded?.moments.map(\.isLiked) == [false, true], "isLiked should be [false, true], as saved (never derived from likes)")
        },
        Check(description: "a moment no timeline holds is not kept") { open in
            let persistence = try await open()
            try await persistence.save(SampleTimelines.timeline(user: "a", moments: 2), for: "a")
            try await persistence.save(PersistenceBatch(moments: [SampleTimelines.moment(id: "stray")]))
            try expect(try await persistence.userIDs(holding: "stray").isEmpty, "a stray moment has holders")
            let owner = SampleTimelines.timeline(user: "b", moments: 0).userDetails
            try await expectInvalidInput("a timeline listing a moment that was never kept must be refused") {
                try await persistence.save(PersistenceBatch(timelines: ["b": StoredTimeline(userDetails: owner, entries: [StoredTimeline.Entry(momentID: "stray")])]))
            }
        },
        Check(description: "a timeline listing a moment twice is refused and writes nothing") { open in
            let persistence = try await open()
            let before = SampleTimelines.timeline(user: "a", moments: 2)
            try await persistence.save(before, for: "a")
            var twice = SampleTimelines.timeline(user: "a", moments: 3, version: 9)
            twice.moments.append(twice.moments[0])
            do {
                try await persistence.save(twice, for: "a")
                try expect(false, "saving a duplicate moment id succeeded")
            } catch let error as PersistenceError {
                try expect(error.code == .invalidInput, "expected .invalidInput, got \(error.code)")
            }
            try expect(try await persistence.load(userID: "a") == before, "a refused save changed the timeline")
        },
        Check(description: "a moment moving between timelines in one batch is kept, and dropped when no one holds it") { open in
            let persistence = try await open()
            let moment = SampleTimelines.moment(id: "mover", index: 1, owner: "a")
            let owner = SampleTimelines.timeline(user: "a", moments: 0).userDetails
            try await persistence.save(MomentsDetails(userDetails: owner, moments: [moment]), for: "a")
            var batch = PersistenceBatch()
            batch.timelines["a"] = StoredTimeline(userDetails: owner, entries: [])
            batch.timelines["b"] = StoredTimeline(userDetails: owner, entries: [StoredTimeline.Entry(momentID: "mover")])
            try await persistence.save(batch)
            try expect(try await persistence.load(userID: "b")?.moments.map(\.id) == ["mover"], "the moment was lost moving to b")
            try await persistence.remove(userID: "b")
            try expect(try await persistence.userIDs(holding: "mover").isEmpty, "a moment no one holds is still listed")
            try await expectInvalidInput("the moment should be gone once no timeline held it") {
                try await persistence.save(PersistenceBatch(timelines: ["c": StoredTimeline(userDetails: owner, entries: [StoredTimeline.Entry(momentID: "mover")])]))
            }
        },
        Check(description: "seeded list edits: duplicates and unknown moments refused, holders exact") { open in
            try await ListEdits.run(try await open(), seed: 0x5EED_1157, steps: 150)
        },
        Check(description: "remove deletes one user only") { open in
            let persistence = try await open()
            try await persistence.save(SampleTimelines.timeline(user: "a", moments: 2), for: "a")
            try await persistence.save(SampleTimelines.timeline(user: "b", moments: 2), for: "b")
            try await persistence.remove(userID: "a")
            try await persistence.remove(userID: "never-saved")
            try expect(try await persistence.load(userID: "a") == nil, "a is still there")
            try expect(try await persistence.load(userID: "b") != nil, "b is gone")
            try expect(try await persistence.userIDs() == ["b"], "userIDs should be [b]")
        },
        Check(description: "userIDs lists every saved user") { open in
            let persistence = try await open()
            let ids = (0..<20).map { "user-\($0)" }
            for id in ids { try await persistence.save(SampleTimelines.timeline(user: id, moments: 1), for: id) }
            try expect(Set(try await persistence.userIDs()) == Set(ids), "userIDs differ")
        },
        Check(description: "removeAll empties the store") { open in
            let persistence = try await open()
            for id in ["x", "y", "z"] { try await persistence.save(SampleTimelines.timeline(user: id, moments: 3), for: id) }
            try await persistence.removeAll()
            try expect(try await persistence.userIDs().isEmpty, "users remain")
            try expect(try await persistence.load(userID: "x") == nil, "x remains")
        },
        Check(description: "concurrent saves from many tasks all land") { open in
            let persistence = try await open()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<50 {
                    group.addTask {
                        for round in 0..<4 {
                            let id = "user-\(task)"
                            try await persistence.save(SampleTimelines.timeline(user: id, moments: 3, version: round), for: id)
                        }
                    }
                }
                try await group.waitForAll()
            }
            for task in 0..<50 {
                let id = "user-\(task)"
                try expect(try await persistence.load(userID: id) == SampleTimelines.timeline(user: id, moments: 3, version: 3), "\(id) lost its last save")
            }
            try expect(try await persistence.userIDs().count == 50, "expected 50 users")
        },
        Check(description: "a timeline of 10,000 moments round-trips") { open in
            let persistence = try await open()
            let details = SampleTimelines.timeline(user: "big", moments: 10_000)
            try await persistence.save(details, for: "big")
            try expect(try await persistence.load(userID: "big") == details, "the large timeline differs")
        },
        Check(description: "hostile user ids are kept apart and listed as they are") { open in
            let persistence = try await open()
            for (index, id) in SampleTimelines.hostileUserIDs.enumerated() {
                try await persistence.save(SampleTimelines.timeline(user: id, moments: 1, version: index), for: id)
            }
            for (index, id) in SampleTimelines.hostileUserIDs.enumerated() {
                let loaded = try await persistence.load(userID: id)
                try expect(loaded == SampleTimelines.timeline(user: id, moments: 1, version: index), "\(id.debugDescription) differs")
            }
            try expect(Set(try await persistence.userIDs()) == Set(SampleTimelines.hostileUserIDs), "userIDs differ for hostile ids")
        },
    ]
}

