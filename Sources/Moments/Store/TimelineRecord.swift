/// One user's timeline as the store keeps it: the owner and the ids of their moments in
/// order (the moments themselves are shared records), with the age of that list.
///
/// A class, reached and changed in place inside the store's actor, like
/// ``MomentRecord``.
final class TimelineRecord {
    var userDetails: UserDetails
    /// The moments' ids in order, each with the `isLiked` the server gave, which counts
    /// only while the moment has no `likes`.
    var entries: [StoredTimeline.Entry] {
        didSet { forgetShown() }
    }
    /// The records of `entries`' moments, in the same order, so a snapshot is assembled
    /// without looking each one up. A record is never replaced while a timeline holds
    /// it (it is created only for an id with no record, and dropped only once no
    /// timeline holds it).
    var members: [MomentRecord] {
        didSet { forgetShown() }
    }
    /// The moments as the owner last saw them, and each member's ``MomentRecord/revision``
    /// then (empty until first assembled, and after `entries` or `members` change).
    var shown: [Moment] = []
    var shownRevisions: [UInt64] = []
    var evidence: Evidence
    /// For least-recently-used eviction.
    var lastUse: UInt64

    init(userDetails: UserDetails, entries: [StoredTimeline.Entry], members: [MomentRecord], evidence: Evidence, lastUse: UInt64) {
        self.userDetails = userDetails
        self.entries = entries
        self.members = members
        self.evidence = evidence
        self.lastUse = lastUse
    }

    private func forgetShown() {
        shown = []
        shownRevisions = []
    }

    var stored: StoredTimeline { StoredTimeline(userDetails: userDetails, entries: entries) }

    /// Whether `moments` are the moments of this timeline, in the same order.
    func hasSameList(as moments: [Moment]) -> Bool {
        guard entries.count == moments.count else { return false }
        for index in entries.indices where entries[index].momentID != moments[index].id { return false }
        return true
    }
}

/// A like in flight: shown to subscribers until the server answers.
struct LikeIntent: Sendable {
    let isLiked: Bool
    let liker: Moment.LikedUser
    /// Which call set it: a later call for the same user and moment replaces it.
    let generation: Int
}
