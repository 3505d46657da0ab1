@testable import Moments
import Foundation
import MomentsTestSupport
import Testing
import MomentsTestTraits

/// The rules of the store's `PersistenceWriter`: batches reach storage in the order
/// they were queued (a later write of a record wins), a failed batch is written again
/// with the next write, and each caller learns the outcome of the write that held its
/// batch.
@Suite(.ownThread) struct PersistenceWriterTests {
    /// Storage whose saves suspend a seeded number of times (so callers queue behind
    /// them) and fail at a seeded rate; it keeps what each save held and how it ended.
    actor ScriptedStorage: WriteOnlyStorage {
        struct Failure: Error {}
        struct Save {
            let markers: Set<String>
            let failed: Bool
        }

        private var random: SeededGenerator
        var failureRate: Double
        private(set) var saves: [Save] = []
        private(set) var moments: [String: Moment] = [:]

        init(seed: UInt64, failureRate: Double) {
            random = SeededGenerator(seed: seed)
            self.failureRate = failureRate
        }

        func save(_ batch: PersistenceBatch) async throws {
            for _ in 0..<Int.random(in: 0...3, using: &random) { await Task.yield() }
            let failed = Double.random(in: 0..<1, using: &random) < failureRate
            saves.append(Save(markers: Set(batch.moments.keys.filter { $0.hasPrefix("t") }), failed: failed))
            if failed { throw Failure() }
            moments.merge(batch.moments) { _, later in later }
        }

        func stopFailing() { failureRate = 0 }
    }

    static func moment(_ id: String, title: String) -> Moment {
        Moment(id: id, userDetails: .init(id: "a", name: "A", avatar: "https://a.example/a.jpg"), type: .url, title: title,
               url: nil, photos: [], createdDate: "0", isLiked: nil, likes: [])
    }

    /// Batches are queued in a known order from one task while their callers wait (and
    /// so write) in a seeded order; saves suspend and fail at random. Afterwards every
    /// record holds the last queued value, each caller got the outcome of the first
    /// save that held its batch, and the writer is idle.
    @Test(arguments: 0..<40 as Range<UInt64>)
    func batchesLandInQueueOrderAndEveryCallerLearnsItsWrite(seed: UInt64) async throws {
        var random = SeededGenerator(seed: seed)
        let storage = ScriptedStorage(seed: seed &* 31 &+ 7, failureRate: 0.2)
        let writer = PersistenceWriter(persistence: storage)
        var expected: [String: String] = [:]
        var outcomes: [Int: Task<Bool, Never>] = [:]
        var unwaited: [(Int, PersistenceWriter.Ticket?)] = []
        let batches = 30
        for index in 0..<batches {
            var moments = [Self.moment("t\(index)", title: "\(index)")]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                moments.append(Self.moment("m\(Int.random(in: 0..<5, using: &random))", title: "\(index)"))
            }
            for moment in moments { expected[moment.id] = "\(index)" }
            unwaited.append((index, writer.enqueue(PersistenceBatch(moments: moments))))
            // Some callers start waiting now, the others later, in a seeded order.
            while !unwaited.isEmpty, Bool.random(using: &random) {
                let (waiting, ticket) = unwaited.remove(at: Int.random(in: 0..<unwaited.count, using: &random))
                outcomes[waiting] = Task { (try? await writer.wait(for: ticket)) != nil }
            }
            for _ in 0..<Int.random(in: 0...2, using: &random) { await Task.yield() }
        }
        for (waiting, ticket) in unwaited.shuffled(using: &random) {
            outcomes[waiting] = Task { (try? await writer.wait(for: ticket)) != nil }
        }
        var succeeded: [Int: Bool] = [:]
        for (index, task) in outcomes { succeeded[index] = await task.value }
        // A failed batch waits for the next write: one more, which cannot fail, lands it.
        await storage.stopFailing()
        try await writer.write(PersistenceBatch(moments: [Self.moment("z", title: "last")]))
        expected["z"] = "last"

        let saved = await storage.moments.mapValues { $0.title ?? "" }
        #expect(saved == expected, "seed \(seed): storage holds \(saved.sorted { $0.key < $1.key })")
        let saves = await storage.saves
        for index in 0..<batches {
            let first = saves.first { $0.markers.contains("t\(index)") }
            #expect(first != nil, "seed \(seed): batch \(index) was never saved")
            #expect(succeeded[index] == (first.map { !$0.failed }), "seed \(seed): batch \(index)'s caller got the wrong outcome")
        }
        #expect(!writer.isBusy, "seed \(seed): the writer is still busy")
    }

    /// A batch queued while nothing is being written is written by its own caller, and
    /// a failure of that write reaches that caller and is retried with the next batch.
    @Test func aFailedFirstWriteReachesItsCallerAndIsWrittenWithTheNext() async throws {
        let storage = ScriptedStorage(seed: 1, failureRate: 1)
        let writer = PersistenceWriter(persistence: storage)
        await #expect(throws: ScriptedStorage.Failure.self) {
            try await writer.write(PersistenceBatch(moments: [Self.moment("m0", title: "first")]))
        }
        #expect(!writer.isBusy)
        await storage.stopFailing()
        try await writer.write(PersistenceBatch(moments: [Self.moment("m1", title: "second")]))
        let saved = await storage.moments.mapValues { $0.title ?? "" }
        #expect(saved == ["m0": "first", "m1": "second"])
    }

    /// A failed batch is written again by the next write even when that write brings
    /// nothing new: persistence catches up with memory without waiting for a change.
    @Test func aFailedWriteIsRetriedByAnEmptyOne() async throws {
        let storage = ScriptedStorage(seed: 1, failureRate: 1)
        let writer = PersistenceWriter(persistence: storage)
        await #expect(throws: ScriptedStorage.Failure.self) {
            try await writer.write(PersistenceBatch(moments: [Self.moment("m0", title: "first")]))
        }
        await storage.stopFailing()
        try await writer.write(PersistenceBatch())
        #expect(await storage.moments.mapValues { $0.title ?? "" } == ["m0": "first"])
        // Once written, nothing is left to retry: an empty write saves nothing.
        let saves = await storage.saves.count
        try await writer.write(PersistenceBatch())
        #expect(await storage.saves.count == saves)
    }

    /// Storage that keeps each save's confirmation interval, failing while told to.
    actor IntervalStorage: WriteOnlyStorage {
        struct Failure: Error {}
        var failing = false
        private(set) var saved: [(moments: [String], interval: ConfirmationInterval?)] = []

        func fail(_ failing: Bool) { self.failing = failing }
        func save(_ batch: PersistenceBatch) throws {
            if failing { throw Failure() }
            saved.append((batch.moments.keys.sorted(), batch.confirmedWithin))
        }
    }

    static func batch(_ id: String, within seconds: ClosedRange<Double>?) -> PersistenceBatch {
        var batch = PersistenceBatch(moments: [moment(id, title: id)])
        batch.confirmedWithin = seconds.map {
            ConfirmationInterval(notBefore: Date(timeIntervalSince1970: $0.lowerBound), notAfter: Date(timeIntervalSince1970: $0.upperBound))
        }
        return batch
    }

    /// Batches are saved each with its own confirmation interval, never merged into one
    /// whose interval would be the union of theirs (shared storage would judge the
    /// newer records by the older answer's start) or unknown (it would refuse them
    /// all): also what a failed write left behind, written with the next.
    @Test func batchesOfDifferentIntervalsAreSavedApart() async throws {
        let storage = IntervalStorage()
        let writer = PersistenceWriter(persistence: storage)
        await storage.fail(true)
        await #expect(throws: IntervalStorage.Failure.self) { try await writer.write(Self.batch("old", within: 10...11)) }
        await storage.fail(false)
        try await writer.write(PersistenceBatch())  // retries "old", with its own interval
        try await writer.write(Self.batch("new", within: 50...51))
        try await writer.write(Self.batch("cached", within: nil))
        try await writer.write(Self.batch("loaded", within: nil))
        let saved = await storage.saved
        #expect(saved.map(\.moments) == [["old"], ["new"], ["cached"], ["loaded"]])
        #expect(saved.map { $0.interval?.notBefore?.timeIntervalSince1970 } == [10, 50, nil, nil])
    }

    /// Queued together, batches merge only when neither carries an interval.
    @Test func aQueueMergesOnlyBatchesWithoutIntervals() {
        var queue = WriteQueue()
        queue.append(Self.batch("a", within: nil))
        queue.append(Self.batch("b", within: nil))
        queue.append(Self.batch("c", within: 1...2))
        queue.append(Self.batch("d", within: 1...2))
        queue.append(Self.batch("e", within: nil))
        queue.append(Self.batch("f", within: nil))
        queue.append(PersistenceBatch())
        #expect(queue.batches.map { $0.moments.keys.sorted() } == [["a", "b"], ["c"], ["d"], ["e", "f"]])
    }
}

/// Storage the writer's tests only save to: it reads back nothing.
protocol WriteOnlyStorage: MomentsPersistence {}

extension WriteOnlyStorage {
    func load(userID: String) -> MomentsDetails? { nil }
    func userIDs(holding momentID: String) -> [String] { [] }
    func remove(userID: String) {}
    func userIDs() -> [String] { [] }
    func removeAll() {}
    func checkWritable() {}
}
