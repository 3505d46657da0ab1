import Foundation
import Moments
import MomentsTestSupport
import Testing

/// Which writes carry when the server confirmed them: those to storage that keeps the
/// interval (shared by instances), and no others.
@Suite struct MomentsStoreConfirmationTests {
    /// In-memory persistence that records each batch, and says whether it keeps intervals.
    actor RecordingPersistence: MomentsPersistence {
        nonisolated let keepsConfirmationIntervals: Bool
        private let memory = InMemoryPersistence()
        private(set) var batches: [PersistenceBatch] = []

        init(keepsConfirmationIntervals: Bool) { self.keepsConfirmationIntervals = keepsConfirmationIntervals }

        func load(userID: String) async throws -> MomentsDetails? { await memory.load(userID: userID) }
        func save(_ batch: PersistenceBatch) async throws {
            batches.append(batch)
            try await memory.save(batch)
        }
        func userIDs(holding momentID: String) async throws -> [String] { await memory.userIDs(holding: momentID) }
        func remove(userID: String) async throws { await memory.remove(userID: userID) }
        func userIDs() async throws -> [String] { await memory.userIDs() }
        func removeAll() async throws { await memory.removeAll() }
        func checkWritable() async throws {}
    }

    @Test func storageThatKeepsIntervalsGetsOneCoveringEachAnswer() async throws {
        let persistence = RecordingPersistence(keepsConfirmationIntervals: true)
        let fixture = await StoreFixture(persistence: persistence)
        let before = Date()
        try await fixture.store.refresh(userID: "0")
        try await fixture.store.setLike(true, momentID: "a", userID: "0")
        let after = Date()

        let batches = await persistence.batches
        #expect(batches.count == 2)
        for batch in batches {
            let interval = try #require(batch.confirmedWithin, "a server's answer is written with when it was confirmed")
            let notBefore = try #require(interval.notBefore)
            // Widened by half the clock-skew tolerance each side (other instances' clocks
            // may disagree), and by the pause between reading the two clocks.
            let margin = MomentsStore.Configuration().clockSkewTolerance / 2
            let slack = Double(margin.components.seconds) + Double(margin.components.attoseconds) / 1e18
            #expect(notBefore >= before.addingTimeInterval(-slack - 0.001))
            #expect(notBefore <= interval.notAfter)
            #expect(interval.notAfter <= after.addingTimeInterval(slack + 0.001))
            #expect(interval.notAfter.timeIntervalSince(notBefore) >= 2 * slack)
        }
    }

    @Test func storageThatDoesNotKeepIntervalsGetsNone() async throws {
        let persistence = RecordingPersistence(keepsConfirmationIntervals: false)
        let fixture = await StoreFixture(persistence: persistence)
        try await fixture.store.refresh(userID: "0")
        try await fixture.store.setLike(true, momentID: "a", userID: "0")

        let batches = await persistence.batches
        #expect(batches.count == 2)
        #expect(batches.allSatisfy { $0.confirmedWithin == nil })
        #expect(try await persistence.load(userID: "0")?.isLiked("a") == true)
    }
}
