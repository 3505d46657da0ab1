import Foundation
import Moments

/// Storage that several simulated instances share, with the rules `PostgresPersistence`
/// keeps: a moment or timeline row is replaced only by a value not certainly older than
/// it (a value of unknown age only replaces another of unknown age), a moment row keeps
/// the answers to likes until a certainly newer write (``LikeConfirmation``), a moment
/// no timeline holds is not kept, and each save announces what it wrote to every other
/// instance (and to the writer too, for rows whose save replaced a different value of
/// unknown order, or whose value a kept like's answer changed).
///
/// Announcements wait in a per-instance inbox, in commit order, until the simulation
/// delivers them; a delivery reads the rows as they are then, as a `LISTEN`ing
/// connection does. An interruption drops an inbox and tells the instance so.
struct SharedStorageModel {
    private struct Row<Value> {
        var value: Value
        var confirmed: ConfirmationInterval?
        /// The answers to likes the value keeps until a certainly newer write (moments only).
        var likeConfirmations: [LikeConfirmation] = []
    }

    private struct Announcement {
        var momentIDs: [String]
        var userIDs: [String]
        /// Moments whose save replaced a different value of unknown order.
        var contested: Set<String> = []
        /// Timelines whose save replaced a different value of unknown order.
        var contestedTimelines: Set<String> = []
    }

    private var moments: [String: Row<Moment>] = [:]
    private var timelines: [String: Row<StoredTimeline>] = [:]
    private var inboxes: [[Announcement]]
    private(set) var operations = 0
    /// Whether saves and deliveries are written down in ``log`` (for traces).
    var keepsLog = true
    private(set) var log: [String] = []
    private(set) var delivered: [Int]

    init(instances: Int) {
        inboxes = Array(repeating: [], count: instances)
        delivered = Array(repeating: 0, count: instances)
    }

    // MARK: - The simulation's controls

    /// The instances with announcements waiting.
    var instancesWithAnnouncements: [Int] {
        inboxes.indices.filter { !inboxes[$0].isEmpty }
    }

    /// Delivers `instance`'s oldest waiting announcement, read from the rows as they are now.
    /// The next announcement for `instance`, read as the rows are now (`nil`: none).
    mutating func takeNext(for instance: Int) -> SharedCommit? {
        guard !inboxes[instance].isEmpty else { return nil }
        let announcement = inboxes[instance].removeFirst()
        var commit = committedState(momentIDs: announcement.momentIDs, userIDs: announcement.userIDs)
        for index in commit.moments.indices where announcement.contested.contains(commit.moments[index].moment.id) {
            commit.moments[index].isContested = true
        }
        for index in commit.timelines.indices where announcement.contestedTimelines.contains(commit.timelines[index].userID) {
            commit.timelines[index].isContested = true
        }
        if keepsLog { log.append("delivered to instance \(instance): \(announcement.momentIDs.map { "\($0)[\((moments[$0]?.value.likes ?? []).map(\.id).joined(separator: ","))] within \(Self.describe(moments[$0]?.confirmed))" })") }
        operations += 1
        delivered[instance] += 1
        return commit
    }

    /// `instance`'s connection is lost and found again: what was announced meanwhile is
    /// lost (the instance is told it was interrupted).
    mutating func interrupt(_ instance: Int) {
        inboxes[instance] = []
        operations += 1
        delivered[instance] += 1
    }

    // MARK: - Persistence

    func load(userID: String) -> MomentsDetails? {
        timelines[userID]?.value.assemble(for: userID) { moments[$0]?.value }
    }

    mutating func save(_ batch: PersistenceBatch, from instance: Int) throws {
        for (userID, timeline) in batch.timelines {
            if let duplicate = timeline.duplicateMomentID {
                throw PersistenceError.duplicateMoment(duplicate, location: "shared", userID: userID)
            }
            for entry in timeline.entries where batch.moments[entry.momentID] == nil && moments[entry.momentID] == nil {
                throw PersistenceError.missingMoment(entry.momentID, location: "shared", userID: userID)
            }
        }
        var released: Set<String> = []
        var writtenTimelines: [String] = []
        var contestedTimelines: Set<String> = []
        for (userID, timeline) in batch.timelines.sorted(by: { $0.key < $1.key }) {
            if let old = timelines[userID] {
                if !ConfirmationInterval.replaces(batch.confirmedWithin, old.confirmed) { continue }
                if old.value != timeline, ConfirmationInterval.overlaps(old.confirmed, batch.confirmedWithin) { contestedTimelines.insert(userID) }
                released.formUnion(old.value.entries.map(\.momentID))
            }
            timelines[userID] = Row(value: timeline, confirmed: batch.confirmedWithin)
            writtenTimelines.append(userID)
        }
        let held = Set(timelines.values.flatMap { $0.value.entries.map(\.momentID) })
        var written: [String] = []
        var contested: Set<String> = []
        for (id, moment) in batch.moments.sorted(by: { $0.key < $1.key }) where held.contains(id) {
            if let existing = moments[id], !ConfirmationInterval.replaces(batch.confirmedWithin, existing.confirmed) { continue }
            var stored = moment
            stored.isLiked = nil
            if let existing = moments[id], existing.value != stored, ConfirmationInterval.overlaps(existing.confirmed, batch.confirmedWithin) {
                contested.insert(id)
            }
            let kept = LikeConfirmation.kept(stored: moments[id]?.likeConfirmations ?? [],
                                             arriving: batch.likeConfirmations.filter { $0.momentID == id },
                                             writtenWithin: batch.confirmedWithin)
            let confirmed = LikeConfirmation.applying(kept, to: stored)
            // A register a kept like's answer overrides: the writer's value differs from
            // the row in an order only the server knows.
            if confirmed != stored { contested.insert(id) }
            moments[id] = Row(value: confirmed, confirmed: batch.confirmedWithin, likeConfirmations: kept)
            written.append(id)
        }
        if keepsLog { log.append("instance \(instance) saved \(batch.moments.keys.sorted()) (wrote \(written)) and timelines \(batch.timelines.keys.sorted()) (wrote \(writtenTimelines), contested \(contestedTimelines.sorted())) within \(Self.describe(batch.confirmedWithin)): "
            + written.map { "\($0)[\((moments[$0]?.value.likes ?? []).map(\.id).joined(separator: ","))]" }.joined(separator: " ")) }
        for id in released where !held.contains(id) { moments[id] = nil }
        operations += 1
        let announcement = Announcement(momentIDs: written, userIDs: writtenTimelines, contested: contested, contestedTimelines: contestedTimelines)
        guard !announcement.momentIDs.isEmpty || !announcement.userIDs.isEmpty else { return }
        for other in inboxes.indices where other != instance { inboxes[other].append(announcement) }
        if !contested.isEmpty || !contestedTimelines.isEmpty {
            inboxes[instance].append(Announcement(momentIDs: contested.sorted(), userIDs: contestedTimelines.sorted(),
                                                  contested: contested, contestedTimelines: contestedTimelines))
        }
    }

    private static func describe(_ interval: ConfirmationInterval?) -> String {
        guard let interval else { return "unknown" }
        let base = 1_800_000_000.0
        return "[\(interval.notBefore.map { String(format: "%.4f", $0.timeIntervalSince1970 - base) } ?? "?"), \(String(format: "%.4f", interval.notAfter.timeIntervalSince1970 - base))]"
    }

    func userIDs(holding momentID: String) -> [String] {
        timelines.filter { $0.value.value.entries.contains { $0.momentID == momentID } }.keys.sorted()
    }

    mutating func remove(userID: String) {
        guard let old = timelines.removeValue(forKey: userID) else { return }
        let held = Set(timelines.values.flatMap { $0.value.entries.map(\.momentID) })
        for entry in old.value.entries where !held.contains(entry.momentID) { moments[entry.momentID] = nil }
    }

    func userIDs() -> [String] {
        timelines.keys.sorted()
    }

    mutating func removeAll() {
        moments = [:]
        timelines = [:]
    }

    func committedState(momentIDs: [String], userIDs: [String]) -> SharedCommit {
        var commit = SharedCommit()
        var ids = Set(momentIDs)
        for userID in userIDs { ids.formUnion(timelines[userID]?.value.entries.map(\.momentID) ?? []) }
        for id in ids.sorted() {
            if let row = moments[id] {
                let interval = LikeConfirmation.interval(ofContent: row.confirmed, keeping: row.likeConfirmations)
                commit.moments.append(CommittedMoment(moment: row.value, confirmedWithin: interval))
            }
        }
        for userID in userIDs.sorted() {
            if let row = timelines[userID], let details = load(userID: userID) {
                commit.timelines.append(CommittedTimeline(userID: userID, details: details, confirmedWithin: row.confirmed))
            }
        }
        return commit
    }
}

/// ``SharedStorageModel`` behind an actor, with one stream of bus events per instance,
/// for stores that run on real threads.
actor SimulatedSharedStorage {
    private var model: SharedStorageModel
    private let feeds: [AsyncStream<SharedChangeEvent>.Continuation]
    private nonisolated let streams: [AsyncStream<SharedChangeEvent>]

    init(instances: Int) {
        var feeds: [AsyncStream<SharedChangeEvent>.Continuation] = []
        var streams: [AsyncStream<SharedChangeEvent>] = []
        for _ in 0..<instances {
            let (stream, continuation) = AsyncStream<SharedChangeEvent>.makeStream()
            streams.append(stream)
            feeds.append(continuation)
        }
        self.feeds = feeds
        self.streams = streams
        model = SharedStorageModel(instances: instances)
    }

    /// Instance `instance`'s view: its persistence and change bus.
    nonisolated func view(_ instance: Int) -> SimulatedInstanceStorage {
        SimulatedInstanceStorage(storage: self, instance: instance, events: streams[instance])
    }

    var instancesWithAnnouncements: [Int] { model.instancesWithAnnouncements }
    var operations: Int { model.operations }
    var log: [String] { model.log }
    var delivered: [Int] { model.delivered }

    func deliverNext(to instance: Int) {
        if let commit = model.takeNext(for: instance) { feeds[instance].yield(.committed(commit)) }
    }

    func interrupt(_ instance: Int) {
        model.interrupt(instance)
        feeds[instance].yield(.interrupted)
    }

    func load(userID: String) -> MomentsDetails? { model.load(userID: userID) }
    func save(_ batch: PersistenceBatch, from instance: Int) throws { try model.save(batch, from: instance) }
    func userIDs(holding momentID: String) -> [String] { model.userIDs(holding: momentID) }
    func remove(userID: String) { model.remove(userID: userID) }
    func userIDs() -> [String] { model.userIDs() }
    func removeAll() { model.removeAll() }
    func committedState(momentIDs: [String], userIDs: [String]) -> SharedCommit {
        model.committedState(momentIDs: momentIDs, userIDs: userIDs)
    }
}

/// One instance's view of ``SimulatedSharedStorage``: its persistence and its change bus.
/// ``sharedChanges()`` returns the one stream the storage made for the instance.
struct SimulatedInstanceStorage: MomentsPersistence, MomentsChangeBus {
    let storage: SimulatedSharedStorage
    let instance: Int
    let events: AsyncStream<SharedChangeEvent>

    func load(userID: String) async throws -> MomentsDetails? { await storage.load(userID: userID) }
    func save(_ batch: PersistenceBatch) async throws { try await storage.save(batch, from: instance) }
    func userIDs(holding momentID: String) async throws -> [String] { await storage.userIDs(holding: momentID) }
    func remove(userID: String) async throws { await storage.remove(userID: userID) }
    func userIDs() async throws -> [String] { await storage.userIDs() }
    func removeAll() async throws { await storage.removeAll() }
    func checkWritable() async throws {}
    var keepsConfirmationIntervals: Bool { true }

    func sharedChanges() -> AsyncStream<SharedChangeEvent> { events }

    func committedState(momentIDs: [String], userIDs: [String]) async throws -> SharedCommit {
        await storage.committedState(momentIDs: momentIDs, userIDs: userIDs)
    }
}
