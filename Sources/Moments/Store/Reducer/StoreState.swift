/// The store's state, normalized: one record per moment id (with the likes in flight
/// on it), shared by every timeline that holds it, and the timelines as ordered lists
/// of ids.
///
/// It holds no locks and does no I/O: ``MomentsStore`` changes it on its actor and
/// turns each change into persistence writes and emissions.
///
/// A class with one owner: the store's actor holds the only reference and never hands
/// it out, so every access is isolated to that actor. (As a struct in the actor, each
/// call of a reading method copied the whole state, a dozen reference counts, first.)
///
/// Its properties keep the runtime's exclusivity checks. Turned off
/// (`@exclusivity(unchecked)`), they bought 1.6% on the store's `refresh` row and 8% on
/// `setLike` (medians of 10 alternating runs of `--only store`): not enough for a
/// promise the compiler cannot check.
final class StoreState {
    /// Where an answer came from, which decides how much it can be trusted.
    enum Source: Equatable {
        /// The server, answering a refresh or (with the moment's id) a like of the
        /// timeline's owner.
        case server(likeOf: String?)
        /// A response cache: of unknown age.
        case cache
        /// The store's own persistence: of unknown age, and already written.
        case persisted
        /// Another instance, through a ``MomentsChangeBus``: ordered like a server
        /// answer, and already written by that instance.
        case shared
    }

    /// What applying an answer changed.
    struct Applied {
        /// Moments already in memory whose confirmed value (shared by every holder) changed.
        var changedMoments: [String] = []
        /// Where each of ``changedMoments`` stands in the answer's list, when the answer
        /// applied was a timeline (a hint for reading its owner's `isLiked`; empty, or of
        /// another length, when there is none).
        var changedPositions: [Int] = []
        /// Whether the answer to a like changed the liked moment as the liker sees it
        /// beneath their like in flight (another user's like in `likes`, say).
        var likersViewChanged = false
        /// Moments whose `isLiked` changed for the answer's owner alone (the answer's
        /// viewer), in a timeline that kept them.
        var changedEntries: [String] = []
        /// The timeline's change, if it appeared or its owner or list changed.
        var timeline: TimelineChange?
        /// The answer conflicts with what the store holds in a way only the server can
        /// settle: refetch the timeline.
        var needsConvergence = false
        /// (moment, liker) registers that differ only because the liker's like is in
        /// flight; if that like fails, refetch.
        var deferredLikers: [LikeKey] = []
        /// (moment, liker) registers another instance changed while the liker's like is
        /// in flight here: the server alone knows which came last, so the register is
        /// refetched once that like's chain ends.
        var contestedLikers: [LikeKey] = []
        /// What to persist.
        var batch = PersistenceBatch()

        /// Moves ``batch`` out, leaving an empty one.
        mutating func takeBatch() -> PersistenceBatch {
            var taken = PersistenceBatch()
            swap(&taken, &batch)
            return taken
        }
    }

    /// Written only by `StoreState` (its extensions included); read by the store.
    var records: [String: MomentRecord] = [:] {
        didSet { lastRecord = nil }
    }
    /// Written only by `StoreState` (its extensions included); read by the store.
    var timelines: [String: TimelineRecord] = [:] {
        didSet { lastTimeline = nil }
    }
    /// The record ``record(_:)`` found last, until ``records`` changes: one step (a
    /// like, above all) asks for the same moment several times.
    private var lastRecord: (id: String, record: MomentRecord)?
    /// The timeline ``timeline(_:)`` found last, until ``timelines`` changes.
    private var lastTimeline: (userID: String, timeline: TimelineRecord)?
    /// Moments and timelines whose value in shared storage (as another instance last
    /// announced it) differs from this store's: the next answer of the server that agrees
    /// with this store's value is written even though nothing changed in memory, so the
    /// storage, and every instance after it, comes to the server's state.
    var divergentMoments: Set<String> = []
    var divergentTimelines: Set<String> = []
    /// Records no timeline in memory holds, kept while an answer that may predate them
    /// can still arrive: dropped earlier, a stale answer could bring back an older value.
    var retired: Set<String> = []
    var useClock: UInt64 = 0
    /// Stamps for ``MomentRecord/mark`` (see `replaced`).
    var markClock: UInt64 = 0
    /// Rises with every change to what subscribers see.
    var version: UInt64 = 0
    /// The last timeline ``displayedTimeline(_:)`` assembled, while still current.
    private var lastDisplayed: (userID: String, version: UInt64, details: MomentsDetails)?
    /// The lists of the last ``Applied`` given back (``recycle(_:)``), emptied: the next
    /// answer's are built in their storage, not in new allocations.
    private var spareApplied = Applied()
    /// Storage for the lists of indices an answer's steps build and drop.
    private var spareIndices: [Int] = []
    let capacity: Int
    /// Whether this store is the only writer of its likers' likes (no other instance
    /// shares its storage): its likes' answers are then the authority for their
    /// registers (see ``MomentRecord/merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``).
    let likesAreExclusive: Bool

    init(capacity: Int, likesAreExclusive: Bool = true) {
        self.capacity = max(1, capacity)
        self.likesAreExclusive = likesAreExclusive
    }

    /// An empty ``Applied``, in the storage of the last one given back.
    func makeApplied() -> Applied {
        var applied = Applied()
        swap(&applied, &spareApplied)
        return applied
    }

    /// Takes back an ``Applied`` its caller is done with, keeping its lists' storage (if
    /// small) for the next answer.
    func recycle(_ applied: consuming Applied) {
        var used = consume applied
        var spare = Applied()
        // Moved, not copied: emptied in place when nothing else holds them.
        func keep<Element>(_ list: inout [Element], from used: inout [Element]) {
            guard used.capacity <= 64 else { return }
            swap(&list, &used)
            list.removeAll(keepingCapacity: true)
        }
        keep(&spare.changedMoments, from: &used.changedMoments)
        keep(&spare.changedPositions, from: &used.changedPositions)
        keep(&spare.changedEntries, from: &used.changedEntries)
        spareApplied = spare
    }

    /// Indices in the storage of the last list given back, empty.
    func makeIndices() -> [Int] {
        var indices: [Int] = []
        swap(&indices, &spareIndices)
        indices.removeAll(keepingCapacity: true)
        return indices
    }

    /// Keeps `indices`' storage (if small) for the next list of indices.
    func recycle(indices: consuming [Int]) {
        if indices.capacity <= 256 { spareIndices = indices }
    }

    // MARK: - Reading

    /// A moment's confirmed value, shared by every timeline holding it (content and
    /// `likes`; `isLiked` `nil`, since it belongs to each viewer).
    func confirmedMoment(_ id: String) -> Moment? {
        records[id]?.value
    }

    /// Who sees a moment change.
    enum Audience {
        /// Every user in memory whose timeline holds it.
        case holders
        /// Every holder but one (whose own like in flight hides the change for now).
        case holdersExcept(String)
        /// One user: the liker, for their own like in flight, or the owner of a timeline
        /// whose `isLiked` of the moment changed.
        case only(String)
    }

    /// The change of `momentID` as `audience` sees it now, each user with their own
    /// `isLiked` and their own like in flight; `nil` if the store holds no such moment.
    func momentChange(_ momentID: String, phase: MomentChange.Phase, likedBy: String?, audience: Audience, hint: EntryHint? = nil) -> MomentChange? {
        guard let record = self.record(momentID) else { return nil }
        var users: Set<String>
        switch audience {
        case .holders: users = record.holders
        case .holdersExcept(let userID):
            users = record.holders
            // The excluded user alone holds it (a liker's own moment): no copy to empty.
            if users.count == 1, users.contains(userID) { return nil }
            users.remove(userID)
        case .only(let userID):
            // One viewer: the change keeps no set of holders until asked for one.
            guard record.holders.contains(userID) else { return nil }
            return singleViewerChange(record, of: userID, phase: phase, likedBy: likedBy, audience: audience, holders: nil, hint: hint)
        }
        // A change no one sees is not a change (every holder's: kept, as before, for a
        // moment no timeline in memory holds).
        if users.isEmpty, case .holders = audience {} else if users.isEmpty { return nil }
        if users.count == 1, let user = users.first {
            return singleViewerChange(record, of: user, phase: phase, likedBy: likedBy, audience: audience, holders: users, hint: hint)
        }
        var isLiked: [String: Bool] = [:]
        var views: [String: Moment] = [:]
        for user in users {
            let liked = entryIsLiked(of: user, on: momentID, hint: hint)
            if !record.intents.isEmpty, record.intents.contains(where: { $0.liker.id == user }) {
                views[user] = view(record, isLiked: liked, by: user)
            } else if let liked {
                isLiked[user] = liked
            }
        }
        // The confirmed value, but for an optimistic change: the liker's view.
        var moment = record.value
        if phase == .optimistic, case .only(let userID) = audience, let own = views[userID] {
            moment = own
            moment.isLiked = nil
        }
        return MomentChange(moment: moment, phase: phase, likedBy: likedBy, holders: users, isLiked: isLiked, views: views)
    }

    /// ``momentChange(_:phase:likedBy:audience:)`` for one user (`holders`, `user`
    /// alone; `nil` when the audience was that user alone), without dictionaries.
    private func singleViewerChange(
        _ record: MomentRecord, of user: String, phase: MomentChange.Phase, likedBy: String?, audience: Audience, holders: Set<String>?,
        hint: EntryHint?
    ) -> MomentChange {
        let liked = entryIsLiked(of: user, on: record.value.id, hint: hint)
        let ownView = !record.intents.isEmpty && record.intents.contains { $0.liker.id == user } ? view(record, isLiked: liked, by: user) : nil
        // The confirmed value, but for an optimistic change: the liker's view.
        var moment = record.value
        if phase == .optimistic, case .only = audience, let ownView {
            moment = ownView
            moment.isLiked = nil
        }
        return MomentChange(moment: moment, phase: phase, likedBy: likedBy, holders: holders, viewer: user,
                            isLiked: ownView == nil ? liked : nil, view: ownView)
    }

    /// Where a moment may stand in one user's timeline (`timeline`, looked up just
    /// before), as the answer just applied listed it: checked before it is used, so a
    /// stale position costs one comparison.
    struct EntryHint {
        let userID: String
        let timeline: TimelineRecord
        let index: Int
    }

    /// The record of `momentID`, if the store holds one (``records``, the last one
    /// found tried first).
    func record(_ momentID: String) -> MomentRecord? {
        if let lastRecord, lastRecord.id == momentID { return lastRecord.record }
        guard let found = records[momentID] else { return nil }
        lastRecord = (momentID, found)
        return found
    }

    /// `userID`'s timeline, if memory holds it (``timelines``, the last one found tried
    /// first).
    func timeline(_ userID: String) -> TimelineRecord? {
        if let lastTimeline, lastTimeline.userID == userID { return lastTimeline.timeline }
        guard let found = timelines[userID] else { return nil }
        lastTimeline = (userID, found)
        return found
    }

    /// `userID`'s `isLiked` of `momentID` as their newest answer gave it (`nil` if unknown).
    func entryIsLiked(of userID: String, on momentID: String, hint: EntryHint? = nil) -> Bool? {
        if let hint, hint.userID == userID, hint.index < hint.timeline.entries.count,
           hint.timeline.entries[hint.index].momentID == momentID {
            return hint.timeline.entries[hint.index].isLiked
        }
        guard let timeline = self.timeline(userID), let index = timeline.position(of: momentID) else { return nil }
        return timeline.entries[index].isLiked
    }

    /// `userID`'s timeline as subscribers see it (assembled once per change).
    func displayedTimeline(_ userID: String) -> MomentsDetails? {
        if let last = lastDisplayed {
            if last.version == version, last.userID == userID { return last.details }
            // Let go of the last snapshot first: if no one else holds it, the next one is
            // built in its place.
            lastDisplayed = nil
        }
        let details = assembleTimeline(userID)
        if let details { lastDisplayed = (userID, version, details) }
        return details
    }

    /// Assembles the snapshot in the moments of the one before last (``TimelineRecord/spare``,
    /// or a copy of the last one's), rebuilding only the moments whose records (or
    /// `isLiked`) changed since those were assembled.
    private func assembleTimeline(_ userID: String) -> MomentsDetails? {
        guard let timeline = self.timeline(userID) else { return nil }
        let entries = timeline.entries
        let members = timeline.members
        var next = timeline.spare
        timeline.spare = ShownMoments()
        if next.moments.count != members.count { next = timeline.shown }
        if next.moments.count != members.count {
            next.moments = []
            next.moments.reserveCapacity(members.count)
            next.revisions = members.map(\.revision)
            for index in members.indices { next.moments.append(view(members[index], isLiked: entries[index].isLiked, by: userID)) }
        } else {
            for index in members.indices {
                let revision = members[index].revision
                guard revision != next.revisions[index] else { continue }
                next.moments[index] = view(members[index], isLiked: entries[index].isLiked, by: userID)
                next.revisions[index] = revision
            }
        }
        timeline.spare = timeline.shown
        timeline.shown = next
        return MomentsDetails(userDetails: timeline.userDetails, moments: next.moments)
    }

    /// `record`'s moment as `userID` sees it: the confirmed value with `isLiked` as the
    /// user's newest answer gave it, and the user's own like in flight on top (a like in
    /// flight is shown to its liker alone; others see it once the server confirms it).
    func view(_ record: MomentRecord, isLiked: Bool?, by userID: String) -> Moment {
        var moment = record.value
        moment.isLiked = isLiked
        if let intent = record.intent(of: userID) {
            moment.setLike(intent.isLiked, by: intent.liker)
            moment.isLiked = intent.isLiked
        }
        return moment
    }

    /// The users in memory whose timelines hold `momentID`.
    func holders(of momentID: String) -> Set<String> {
        record(momentID)?.holders ?? []
    }

    /// Whether `userID`'s timeline holds `momentID`.
    func timeline(of userID: String, holds momentID: String) -> Bool {
        record(momentID)?.holders.contains(userID) ?? false
    }
}

/// A (user, moment) pair: a register of a moment, or a chain of one user's likes of it.
struct LikeKey: Hashable, Sendable {
    let userID: String
    let momentID: String
}

