/// One user's timeline as the store keeps it: the owner and the ids of their moments in
/// order (the moments themselves are shared records), with the age of that list.
///
/// A class, reached and changed in place inside the store's actor, like
/// ``MomentRecord``.
///
/// Its properties keep the runtime's exclusivity checks. Turned off
/// (`@exclusivity(unchecked)`), they bought 1.6% on the store's `refresh` row and 8% on
/// `setLike` (medians of 10 alternating runs of `--only store`): not enough for a
/// promise the compiler cannot check.
final class TimelineRecord {
    var userDetails: UserDetails
    /// The moments' ids in order, each with `isLiked` as the owner's newest answer gave
    /// it (the value belongs to the viewer: the store never derives it from `likes`).
    private(set) var entries: [StoredTimeline.Entry]
    /// The records of `entries`' moments, in the same order, so a snapshot is assembled
    /// without looking each one up. A record is never replaced while a timeline holds
    /// it (it is created only for an id with no record, and dropped only once no
    /// timeline holds it).
    private(set) var members: [MomentRecord]
    /// The moments as the owner last saw them (see ``ShownMoments``).
    var shown = ShownMoments()
    /// The moments of the snapshot before ``shown``: the next snapshot is assembled in
    /// them, since by then no subscriber is likely to hold them any more (a stream keeps
    /// only its newest value), so they are updated in place where `shown`, which a
    /// subscriber may still hold, would be copied.
    var spare = ShownMoments()
    var evidence: Evidence
    /// For least-recently-used eviction.
    var lastUse: UInt64
    /// The owner's `isLiked` of each moment they liked or unliked, as that like's answer
    /// gave it: the authority for that register against every answer not certainly
    /// computed after it (see ``StoreState/applyList(_:to:for:evidence:policy:newMembers:into:)``).
    var isLikedPins: [String: IsLikedPin] = [:]
    /// Each listed moment's index in `entries`, built when first asked for after the list
    /// changed (to tell another holder's `isLiked` when a shared moment changes).
    private var positions: [String: Int]?
    /// The index ``position(of:)`` found last (checked before use).
    private var lastPosition = 0

    init(userDetails: UserDetails, entries: [StoredTimeline.Entry], members: [MomentRecord], evidence: Evidence, lastUse: UInt64) {
        self.userDetails = userDetails
        self.entries = entries
        self.members = members
        self.evidence = evidence
        self.lastUse = lastUse
    }

    /// Replaces the list (and its records, unless `members` is `nil`: the same list).
    func replaceList(with entries: [StoredTimeline.Entry], members: [MomentRecord]?) {
        self.entries = entries
        if let members { self.members = members }
        shown = ShownMoments()
        spare = ShownMoments()
        positions = nil
    }

    /// Sets the owner's `isLiked` of the moment at `index`, as a newer answer gave it.
    func setIsLiked(_ isLiked: Bool?, at index: Int) {
        entries[index].isLiked = isLiked
        shown.invalidate(at: index)
        spare.invalidate(at: index)
    }

    /// The index of `momentID` in the list, if the timeline holds it.
    ///
    /// The last index found is tried first: a like asks for its moment several times.
    func position(of momentID: String) -> Int? {
        let last = lastPosition
        if last < entries.count, entries[last].momentID == momentID { return last }
        guard let found = lookUpPosition(of: momentID) else { return nil }
        lastPosition = found
        return found
    }

    private func lookUpPosition(of momentID: String) -> Int? {
        if let positions { return positions[momentID] }
        var built: [String: Int] = [:]
        built.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() { built[entry.momentID] = index }
        positions = built
        return built[momentID]
    }

    var stored: StoredTimeline { StoredTimeline(userDetails: userDetails, entries: entries) }

    /// Whether `moments` are the moments of this timeline, in the same order.
    func hasSameList(as moments: [Moment]) -> Bool {
        guard entries.count == moments.count else { return false }
        for index in entries.indices where entries[index].momentID != moments[index].id { return false }
        return true
    }
}

/// The owner's `isLiked` of a moment as the answer to their own like of it gave it, and
/// when the server may have computed that answer.
struct IsLikedPin: Sendable {
    let isLiked: Bool?
    let evidence: Evidence
}

/// A like in flight: shown to subscribers until the server answers.
struct LikeIntent: Sendable {
    let isLiked: Bool
    let liker: Moment.LikedUser
    /// Which call set it: a later call for the same user and moment replaces it.
    let generation: Int
}

/// A timeline's moments as assembled for a snapshot, with each member's
/// ``MomentRecord/revision`` then: empty until first assembled, and after the list
/// changes; a revision of `UInt64.max` marks a moment whose `isLiked` changed since.
struct ShownMoments {
    var moments: [Moment] = []
    var revisions: [UInt64] = []

    /// Marks the moment at `index` as changed since.
    mutating func invalidate(at index: Int) {
        if index < revisions.count { revisions[index] = .max }
    }
}
