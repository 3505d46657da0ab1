import Moments
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// A timeline's snapshot is rebuilt from the last one, only where a moment changed
/// (see `StoreState.assembleTimeline`). These tests check it never goes stale: after
/// every step of seeded random work, each timeline equals the server's, and a fresh
/// store assembling the persisted state from scratch shows the same.
@Suite(.ownThread) struct MomentsStoreSnapshotTests {
    static let users = ["0", "1", "2", "3"]
    static let pool = (0..<8).map { "m\($0)" }

    @Test(arguments: 0..<24)
    func snapshotsBuiltFromTheLastOneMatchTheServerAfterEveryStep(seed: Int) async throws {
        var random = SeededGenerator(seed: UInt64(seed) &+ 0x5eed)
        let service = FakeMomentsService()
        let persistence = InMemoryPersistence()
        let store = MomentsStore(service: service, persistence: persistence)
        // Subscribers make the store assemble a snapshot at every change, optimistic
        // ones included: those are the snapshots the next ones are built from.
        var watchers: [Task<Void, Never>] = []
        for user in Self.users {
            await service.addUser(user, moments: Self.randomList(using: &random))
            let updates = await store.updates(for: user)
            watchers.append(Task { for await _ in updates {} })
            try await store.refresh(userID: user)
        }
        defer { watchers.forEach { $0.cancel() } }
        for step in 0..<40 {
            let user = Self.users.randomElement(using: &random) ?? "0"
            var action = ""
            switch Int.random(in: 0..<14, using: &random) {
            case 10..<12:
                // While the like is held, the snapshot shows it (the optimistic layer).
                guard let moment = try await store.details(for: user)?.moments.randomElement(using: &random) else { continue }
                let isLiked = moment.isLiked != true
                action = "\(user) likes \(moment.id), held: \(isLiked)"
                await service.holdNext()
                let call = Task { try await store.setLike(isLiked, momentID: moment.id, userID: user) }
                #expect(await withFailsafe { await service.waitForWaitingCalls(1) }, "seed \(seed), step \(step): the like never reached the service")
                let shown = try await store.details(for: user)?.moments.first { $0.id == moment.id }
                #expect(shown?.isLiked == isLiked && shown?.likes?.contains { $0.id == user } == isLiked,
                        "seed \(seed), step \(step) (\(action)): the optimistic snapshot shows \(String(describing: shown))")
                await service.release()
                _ = try await call.value
            case 12..<14:
                // Another client changes a like on the server; every timeline is refreshed.
                guard let moment = try await service.serverTimeline(user).moments.randomElement(using: &random) else { continue }
                let other = Self.users.randomElement(using: &random) ?? "0"
                let isLiked = Bool.random(using: &random)
                action = "another client has \(other) like \(moment.id): \(isLiked)"
                _ = try await service.updateLike(isLiked, momentID: moment.id, fromUserID: other)
                for viewer in Self.users { try await store.refresh(userID: viewer) }
            case 0..<4:
                guard let moment = try await store.details(for: user)?.moments.randomElement(using: &random) else { continue }
                let isLiked = Bool.random(using: &random)
                action = "\(user) likes \(moment.id): \(isLiked)"
                try await store.setLike(isLiked, momentID: moment.id, userID: user)
            case 4..<6:
                guard let moment = try await store.details(for: user)?.moments.randomElement(using: &random) else { continue }
                action = "\(user)'s like of \(moment.id) fails"
                await service.failNext()
                await #expect(throws: FakeMomentsService.InjectedFailure.self) {
                    try await store.setLike(moment.isLiked != true, momentID: moment.id, userID: user)
                }
            default:
                let list = Self.randomList(using: &random)
                action = "\(user)'s timeline becomes \(list)"
                await service.addUser(user, moments: list)
                try await store.refresh(userID: user)
            }
            await store.waitUntilIdle()
            let fresh = MomentsStore(service: service, persistence: persistence)
            for viewer in Self.users {
                let server = try await service.serverTimeline(viewer)
                let shown = try await store.details(for: viewer)
                let rebuilt = try await fresh.details(for: viewer)
                #expect(shown == server, "seed \(seed), step \(step) (\(action)): \(viewer)'s snapshot differs from the server's")
                #expect(rebuilt == server, "seed \(seed), step \(step) (\(action)): \(viewer)'s persisted timeline differs from the server's")
            }
        }
    }

    /// 2 to 6 distinct moments of the pool, in random order.
    static func randomList(using random: inout SeededGenerator) -> [String] {
        Array(pool.shuffled(using: &random).prefix(Int.random(in: 2...6, using: &random)))
    }
}
