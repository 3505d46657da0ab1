/// One change in a ``MomentsStore``, as ``MomentsStore/changes()`` delivers it.
///
/// Every change carries a store-wide ``sequence``: each consumer sees sequences strictly
/// increasing, and changes to any one moment in the order the store applied them.
///
/// For example, forwarding likes to each user's connection:
/// ```swift
/// for await change in await store.changes() {
///     guard case .moment(let update) = change.kind else { continue }
///     for userID in change.userIDs { outbox(userID).send(update.moment(for: userID)) }
/// }
/// ```
public struct MomentsChange: Sendable, CustomStringConvertible {
    /// The change's place in the store's history: strictly increasing, store-wide.
    public let sequence: UInt64
    /// What happened.
    public let kind: Kind

    package init(sequence: UInt64, kind: Kind) {
        self.sequence = sequence
        self.kind = kind
    }

    /// What happened.
    public enum Kind: Sendable {
        /// A user's timeline appeared in the store, or its owner or list of moments
        /// changed.
        case timeline(TimelineChange)
        /// A moment changed, in every timeline that holds it.
        case moment(MomentChange)
        /// The store began fetching a user's timeline.
        case refreshStarted(userID: String)
        /// Fetching a user's timeline failed; the store keeps the last good state.
        case refreshFailed(userID: String, error: any Error)
        /// Fetching a user's timeline ended with the answer applied and persisted, whether
        /// or not it changed anything: every ``refreshStarted(userID:)`` is followed by
        /// this or by ``refreshFailed(userID:error:)``, so an observer that is not the
        /// caller knows when loading ended.
        case refreshFinished(userID: String)
        /// This consumer missed the changes in `missed`: it fell behind its buffer, or
        /// asked to resume after a sequence the store no longer retains. Rebuild from
        /// snapshots (``MomentsStore/details(for:)``), then go on with the changes that
        /// follow.
        case gap(missed: ClosedRange<UInt64>)
        /// Changes committed by other instances may have been missed (the store's
        /// ``MomentsStore/Configuration-swift.struct/changeBus`` lost its connection and
        /// got it back). The store resynchronises what it holds from the shared storage;
        /// the changes that follow carry what differed.
        case sharedChangesInterrupted
    }

    /// The users whose timelines the change concerns: the owner for timeline and
    /// refresh changes, every user in memory whose timeline holds the moment for a
    /// moment change, none for a gap.
    public var userIDs: Set<String> {
        switch kind {
        case .timeline(let change): [change.userID]
        case .moment(let change): change.holders
        case .refreshStarted(let userID), .refreshFailed(let userID, _), .refreshFinished(let userID): [userID]
        case .gap, .sharedChangesInterrupted: []
        }
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        switch kind {
        case .timeline(let change):
            "#\(sequence) timeline \(change.reason) for user \(change.userID): +\(change.inserted.count) −\(change.removed.count) ~\(change.changed.count)"
        case .moment(let change):
            "#\(sequence) moment \(change.moment.id) \(change.phase)" + (change.likedBy.map { " (like of user \($0))" } ?? "")
        case .refreshStarted(let userID): "#\(sequence) refresh started for user \(userID)"
        case .refreshFailed(let userID, let error): "#\(sequence) refresh failed for user \(userID): \(error)"
        case .refreshFinished(let userID): "#\(sequence) refresh finished for user \(userID)"
        case .gap(let missed): "#\(sequence) gap: missed \(missed.lowerBound)…\(missed.upperBound)"
        case .sharedChangesInterrupted: "#\(sequence) gap: changes of other instances may have been missed; resynchronising"
        }
    }
}

/// A user's timeline appeared or changed its owner or list of moments.
public struct TimelineChange: Sendable, Hashable {
    /// Why the change happened.
    public enum Reason: String, Sendable, Hashable, CustomStringConvertible {
        /// The timeline appeared in the store (read from persistence or first fetched).
        case loaded
        /// A newer answer changed the owner or the list of moments.
        case replaced

        /// A one-line description, for logs and messages.
        public var description: String { rawValue }
    }

    /// The owner of the timeline.
    public let userID: String
    /// Why the change happened.
    public let reason: Reason
    /// The owner's details.
    public let userDetails: UserDetails
    /// The moments' ids, in order.
    public let momentIDs: [String]
    /// The moments new to the timeline (all of them when ``reason`` is `.loaded`), as
    /// the owner sees them.
    public let inserted: [Moment]
    /// The ids of the moments that left the timeline.
    public let removed: [String]
    /// The ids of moments that stayed and changed in the same step; each also travels
    /// as a ``MomentChange``, just before this change.
    public let changed: [String]
}

/// A moment changed, as some users see it: every holder for a change of its confirmed
/// value, the liker alone for a like in flight (and its rollback), the owner alone for a
/// change of their `isLiked`.
public struct MomentChange: Sendable, Hashable {
    /// How settled the new value is.
    public enum Phase: String, Sendable, Hashable, CustomStringConvertible {
        /// It includes the liker's like still in flight (seen by the liker alone).
        case optimistic
        /// It is the server's state: a like's answer, a refresh, or another instance.
        case confirmed
        /// A like failed and was taken back; the value is the confirmed state.
        case rolledBack

        /// A one-line description, for logs and messages.
        public var description: String { rawValue }
    }

    /// The moment as ``holders`` see it, with `isLiked` `nil` (it belongs to each
    /// viewer): the confirmed value, or for an optimistic or rolled-back change the
    /// moment as the liker sees it. Use ``moment(for:)`` for one user's view.
    public var moment: Moment { storage.moment }
    /// How settled ``moment`` is.
    public var phase: Phase { storage.phase }
    /// The user whose like (or its answer, or its failure) caused the change; `nil`
    /// for an answer of a refresh.
    public var likedBy: String? { storage.likedBy }
    /// The users in memory whose view of the moment changed.
    public var holders: Set<String> {
        switch storage.holders {
        case .all(let holders): holders
        case .viewer(let viewer): [viewer]
        }
    }
    /// Each holder's own values: `isLiked` as that user's newest answer gave it, and the
    /// whole view of a holder whose own like of the moment is in flight.
    private var viewers: Viewers { storage.viewers }

    /// The change's values, shared by its copies: a change travels through the store's
    /// actions, into the feed's log and to every consumer, one reference each.
    private final class Storage: Sendable {
        let moment: Moment
        let phase: Phase
        let likedBy: String?
        let holders: Holders
        let viewers: Viewers

        init(moment: Moment, phase: Phase, likedBy: String?, holders: Holders, viewers: Viewers) {
            self.moment = moment
            self.phase = phase
            self.likedBy = likedBy
            self.holders = holders
            self.viewers = viewers
        }
    }

    private let storage: Storage

    /// Who the change is for: a set of users, or the viewer alone (a like's own change,
    /// or an owner's `isLiked`: the common change, which then builds no set until asked).
    private enum Holders: Sendable {
        case all(Set<String>)
        case viewer(String)
    }

    /// Holders' own values, kept without dictionaries when one holder has any (the usual
    /// change: a timeline's owner, or a liker). A holder has either a view (its like is
    /// in flight) or an `isLiked`, never both, so each content has one representation and
    /// the synthesized equality compares contents.
    private enum Viewers: Sendable, Hashable {
        case none
        case one(String, isLiked: Bool?, view: Moment?)
        case many(isLiked: [String: Bool], views: [String: Moment])
    }

    package init(moment: Moment, phase: Phase, likedBy: String?, holders: Set<String>, isLiked: [String: Bool] = [:], views: [String: Moment] = [:]) {
        let viewer = isLiked.count + views.count == 1 ? (isLiked.first?.key ?? views.first?.key) : nil
        let viewers: Viewers
        if isLiked.isEmpty, views.isEmpty {
            viewers = .none
        } else if let viewer {
            viewers = .one(viewer, isLiked: isLiked[viewer], view: views[viewer])
        } else {
            viewers = .many(isLiked: isLiked, views: views)
        }
        storage = Storage(moment: moment, phase: phase, likedBy: likedBy, holders: .all(holders), viewers: viewers)
    }

    /// A change whose own values belong to `viewer` alone: their `isLiked` (`nil`:
    /// unknown) and, if their like is in flight, their whole view. `holders` `nil`: the
    /// viewer alone holds it.
    package init(moment: Moment, phase: Phase, likedBy: String?, holders: Set<String>?, viewer: String, isLiked: Bool?, view: Moment?) {
        storage = Storage(moment: moment, phase: phase, likedBy: likedBy, holders: holders.map { .all($0) } ?? .viewer(viewer),
                          viewers: isLiked == nil && view == nil ? .none : .one(viewer, isLiked: isLiked, view: view))
    }

    /// Whether the two changes carry the same values.
    public static func == (lhs: MomentChange, rhs: MomentChange) -> Bool {
        lhs.storage === rhs.storage
            || (lhs.moment == rhs.moment && lhs.phase == rhs.phase && lhs.likedBy == rhs.likedBy && lhs.holders == rhs.holders
                && lhs.viewers == rhs.viewers)
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(moment)
        hasher.combine(phase)
        hasher.combine(likedBy)
        hasher.combine(holders)
        hasher.combine(viewers)
    }

    /// The moment as `userID`'s timeline shows it: ``moment`` with `isLiked` as that
    /// user's newest answer gave it (never derived from `likes`: the server decides what
    /// `isLiked` means), and the user's own like in flight, if any.
    public func moment(for userID: String) -> Moment {
        var moment = self.moment
        switch viewers {
        case .none:
            moment.isLiked = nil
        case .one(let viewer, let isLiked, let view):
            guard viewer == userID else {
                moment.isLiked = nil
                break
            }
            if let view { return view }
            moment.isLiked = isLiked
        case .many(let isLiked, let views):
            if let view = views[userID] { return view }
            moment.isLiked = isLiked[userID]
        }
        return moment
    }
}
