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
        Check(description: "saveMoment replaces one moment and nothing else") { open in
            let persistence = try await open()
            let details = SampleTimelines.timeline(user: "0", moments: 10)
            try await persistence.save(details, for: "0")
            var liked = details.moments[3]
            liked.isLiked = true
            liked.likes = [Moment.LikedUser(id: "0", avatar: "https://img/0.jpg")]
            try expect(try await persistence.saveMoment(liked, for: "0"), "saveMoment reported no change")
            var expected = details
            expected.moments[3] = liked
            try expect(try await persistence.load(userID: "0") == expected, "saveMoment changed the wrong thing")
            try expect(!(try await persistence.saveMoment(SampleTimelines.moment(id: "absent"), for: "0")), "saveMoment of an absent moment reported a change")
            try expect(!(try await persistence.saveMoment(liked, for: "nobody")), "saveMoment for an absent user reported a change")
            try expect(try await persistence.load(userID: "nobody") == nil, "saveMoment created a timeline")
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
