/// One moment as the store knows it: the confirmed value that every timeline holding
/// it shares, and what the store knows about that value's age.
///
/// A moment's state is made of registers: its content (author, type, title, url,
/// photos, date) and, for each user, whether that user likes it. ``merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)``
/// is the ordering rule that keeps each register moving forward only.
///
/// A class, so the store reaches and changes a record in place; records live inside the
/// store's actor and are never shared outside it.
///
/// Its properties keep the runtime's exclusivity checks. Turned off
/// (`@exclusivity(unchecked)`), they bought 1.6% on the store's `refresh` row and 8% on
/// `setLike` (medians of 10 alternating runs of `--only store`): not enough for a
/// promise the compiler cannot check.
final class MomentRecord {
    /// The confirmed value, with `isLiked` `nil`: `isLiked` belongs to each timeline
    /// and follows `likes`.
    var value: Moment {
        didSet { revision &+= 1 }
    }
    /// Rises whenever the moment as subscribers see it may have changed (its value, or
    /// the likes in flight on it), so a timeline's snapshot rebuilds only what changed.
    var revision: UInt64 = 0
    /// A scratch stamp for set operations over records without hashing their ids.
    var mark: UInt64 = 0
    /// When the server computed the value (its registers not pinned).
    var evidence: Evidence
    /// Likes this store's own mutations confirmed, by liker: an answer the server may
    /// have computed before such a mutation cannot undo it.
    var pins: [String: LikePin] = [:]
    /// The users in memory whose timelines hold the moment.
    var holders: Set<String> = []
    /// Likes in flight on the moment, in the order their likers first liked; a record
    /// with likes in flight is kept even when no timeline holds it.
    var intents: [LikeIntent] = []

    init(value: Moment, evidence: Evidence) {
        self.value = value
        self.evidence = evidence
    }

    /// When the server may have computed the value as a whole, pins included: from the
    /// earliest instant of its oldest evidence to the latest answer about it.
    /// Its `received` is when the store last received evidence about the value.
    var confirmation: Evidence {
        pins.values.reduce(evidence) { $0.covering(Evidence(sent: $1.sent, received: $1.received)) }
    }

    /// What merging an answer's value did.
    struct Merge {
        /// Whether ``value`` changed.
        var changed = false
        /// The answer differs from the value in a register whose order against the
        /// value cannot be known, and no like of this store in flight explains it: the
        /// store must ask the server again.
        var isAmbiguous = false
        /// Likers whose registers differ only because their likes are in flight; if one
        /// of those likes fails, the store must ask the server again.
        var deferredLikers: [String] = []
    }

    /// Merges `incoming` (an answer's value of this moment) under the ordering rule:
    /// - an answer the server certainly computed after the value replaces it;
    /// - one certainly computed before it changes nothing;
    /// - otherwise their order is unknown: an equal answer changes nothing, and a
    ///   different one leaves the value as it is and is reported ambiguous (unless the
    ///   difference is explained by likes still in flight);
    /// - in every case, `pin` (the answer of this store's own like of this moment) is
    ///   the authority for its liker's register, and earlier pins hold against any
    ///   answer not certainly computed after them.
    ///
    /// That authority rests on this store being the only writer of its likers' likes.
    /// When it is not (`likesAreExclusive` false: other instances change the same
    /// likes), a pin is only the freshest evidence this store has about one register: it
    /// is still applied (a like returns the state it set), and where it disagrees with a
    /// value of unknown order against it, the disagreement is reported ambiguous, so the
    /// server settles it.
    func merge(
        _ incoming: Moment, evidence answer: Evidence, pin: LikePin?, likesAreExclusive: Bool = true,
        isLikeInFlight: (String) -> Bool
    ) -> Merge {
        // The common case, cheaply: the answer agrees with the value, and no like is pinned.
        if pin == nil, absorbIfUnchanged(incoming, evidence: answer) { return Merge() }
        var merge = Merge()
        if let pin {
            // Shown either way (rule 1); with other writers of the same likes, one that
            // contradicts a value of unknown order is also settled by the server.
            if !likesAreExclusive, contradicts(pin) { merge.isAmbiguous = true }
            pins[pin.liker.id] = pin
        }
        var candidate = incoming.sharedValue(keepingLikes: value.likes)
        if answer.isCertainlyNewer(than: evidence) {
            evidence = answer
            if !pins.isEmpty {
                pins = pins.filter { !answer.wasSent(after: $0.value.received) }
                if !likesAreExclusive, pins.values.contains(where: { !candidate.agrees(with: $0) }) {
                    // A pin of unknown order against a newer value that disagrees with it:
                    // the pin's value stays shown until the server settles which came last.
                    merge.isAmbiguous = true
                }
                merge.isAmbiguous = !candidate.apply(pins.values) || merge.isAmbiguous
            }
            if candidate != value {
                value = candidate
                merge.changed = true
            }
            return merge
        }
        // The value stands (the answer is older, or of unknown order); pins still apply.
        var pinned = value
        merge.isAmbiguous = !pinned.apply(pins.values)
        if pinned != value {
            value = pinned
            merge.changed = true
        }
        guard !answer.isCertainlyOlder(than: evidence) else { return merge }
        merge.isAmbiguous = !candidate.apply(pins.values.filter { !answer.wasSent(after: $0.received) }) || merge.isAmbiguous
        guard candidate != value else { return merge }
        guard candidate.sameContent(as: value) else {
            merge.isAmbiguous = true
            return merge
        }
        let mine = Set((value.likes ?? []).map(\.id))
        let theirs = Set((candidate.likes ?? []).map(\.id))
        let differing = mine.symmetricDifference(theirs)
        if differing.isEmpty || differing.contains(where: { !isLikeInFlight($0) }) {
            merge.isAmbiguous = true  // the same likers in another order, or a liker nobody here is changing
        } else {
            merge.deferredLikers = Array(differing)
        }
        return merge
    }

    /// Takes `incoming` at once if it agrees with the value and no like is pinned on the
    /// record: the same content, likes included (or no likes in either). Only the
    /// evidence may advance. Returns whether it did; when it did, a full
    /// ``merge(_:evidence:pin:likesAreExclusive:isLikeInFlight:)`` without a pin would have
    /// changed the same and reported nothing.
    func absorbIfUnchanged(_ incoming: Moment, evidence answer: Evidence) -> Bool {
        // The same content includes the same likes (both absent, or the same list).
        guard pins.isEmpty, incoming.hasSameContent(as: value) else { return false }
        if answer.isCertainlyNewer(than: evidence) { evidence = answer }
        return true
    }

    /// Whether `pin` disagrees with the value's register for its liker, which the server
    /// may have confirmed after the pin's like: from an earlier like of the same liker
    /// (replaced by this one, which was sent after it answered), or from an answer not
    /// certainly received before the like was sent.
    private func contradicts(_ pin: LikePin) -> Bool {
        guard !value.agrees(with: pin) else { return false }
        if let earlier = pins[pin.liker.id], earlier.received <= pin.sent { return false }
        return !(evidence.received < pin.sent)
    }
}

/// A like this store's own mutation confirmed.
struct LikePin: Sendable {
    let isLiked: Bool
    let liker: Moment.LikedUser
    /// When the mutation was sent.
    let sent: StoreInstant
    /// When the mutation's answer was received.
    let received: StoreInstant

    /// Whether the server certainly applied this like before `other`.
    func isCertainlyBefore(_ other: LikePin) -> Bool { received < other.sent }
}

extension Moment {
    /// The value shared by every timeline: `isLiked` removed, and `likes` kept from
    /// `known` when this value has none (an answer without likes says nothing about them).
    func sharedValue(keepingLikes known: [LikedUser]?) -> Moment {
        var shared = self
        shared.isLiked = nil
        if shared.likes == nil, known != nil { shared.likes = known }
        return shared
    }

    /// Adds or removes each pinned liker in `likes` (when likes are known), appending
    /// likers in the order their likes were answered. Returns `false` if two likers were
    /// appended whose order on the server cannot be known (their likes overlapped): the
    /// likes list is then a guess that only the server can settle.
    @discardableResult
    mutating func apply<Pins: Sequence>(_ pins: Pins) -> Bool where Pins.Element == LikePin {
        var appended: [LikePin] = []
        for pin in pins.sorted(by: { $0.received < $1.received }) {
            let present = likes?.contains { $0.id == pin.liker.id } ?? true
            setLike(pin.isLiked, by: pin.liker)
            if pin.isLiked, !present { appended.append(pin) }
        }
        return zip(appended, appended.dropFirst()).allSatisfy { $0.isCertainlyBefore($1) }
    }

    /// Adds `liker` to `likes` (at the end, as the server appends) or removes them.
    mutating func setLike(_ isLiked: Bool, by liker: LikedUser) {
        guard var list = likes else { return }
        if let index = list.firstIndex(where: { $0.id == liker.id }) {
            guard !isLiked else { return }
            list.remove(at: index)
        } else {
            guard isLiked else { return }
            list.append(liker)
        }
        likes = list
    }

    /// Whether `pin`'s like is what this value says of its liker (always, when likes
    /// are unknown).
    func agrees(with pin: LikePin) -> Bool {
        guard let likes else { return true }
        return likes.contains { $0.id == pin.liker.id } == pin.isLiked
    }

    /// Whether every field but `likes` and `isLiked` is equal.
    func sameContent(as other: Moment) -> Bool {
        id == other.id && userDetails == other.userDetails && type == other.type && title == other.title
            && url == other.url && photos == other.photos && createdDate == other.createdDate
    }
}
