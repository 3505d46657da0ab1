/// A moment as one user sees it, described rather than built: the confirmed value, the
/// user's `isLiked` as their newest answer gave it, and their own like in flight on top
/// (what ``StoreState/view(_:isLiked:by:)`` builds).
///
/// Two descriptions are equal exactly when the views they describe are; comparing them
/// copies no moment and no `likes` list. The store asks whether a user's view changed
/// (a like shown, taken back, or confirmed beneath another in flight) far more often
/// than it builds one.
struct LikerView: Equatable {
    let value: Moment
    let isLiked: Bool?
    let intent: LikeIntent?

    /// The `isLiked` shown: the like in flight's, else the answer's.
    private var shownIsLiked: Bool? { intent?.isLiked ?? isLiked }

    static func == (lhs: LikerView, rhs: LikerView) -> Bool {
        guard lhs.shownIsLiked == rhs.shownIsLiked else { return false }
        // Equal values with the same like on top: the same view, found without a walk.
        if lhs.intent.sameEffect(as: rhs.intent), lhs.value.hasSameContent(as: rhs.value) { return true }
        guard lhs.value.sameContent(as: rhs.value) else { return false }
        switch (lhs.value.likes, rhs.value.likes) {
        case (nil, nil): return true
        case let (left?, right?): return ShownLikes(left, intent: lhs.intent).elementsEqual(ShownLikes(right, intent: rhs.intent))
        default: return false
        }
    }
}

extension Optional<LikeIntent> {
    /// Whether both are absent, or both set the same liker (avatar included) to the same
    /// state: applied to one value, they build the same view.
    fileprivate func sameEffect(as other: LikeIntent?) -> Bool {
        switch (self, other) {
        case (nil, nil): true
        case let (mine?, theirs?): mine.isLiked == theirs.isLiked && mine.liker == theirs.liker
        default: false
        }
    }
}

/// A `likes` list with a like in flight applied, as ``Moment/setLike(_:by:)`` applies
/// it, read in place: a like adds its liker at the end if absent, an unlike removes
/// their first entry.
private struct ShownLikes: Sequence, IteratorProtocol {
    private let list: [Moment.LikedUser]
    private var removed: String?
    private var appended: Moment.LikedUser?
    private var index = 0

    init(_ list: [Moment.LikedUser], intent: LikeIntent?) {
        self.list = list
        guard let intent else {
            removed = nil
            return
        }
        if intent.isLiked {
            removed = nil
            appended = list.contains { $0.id == intent.liker.id } ? nil : intent.liker
        } else {
            removed = intent.liker.id
        }
    }

    mutating func next() -> Moment.LikedUser? {
        while index < list.count {
            let user = list[index]
            index += 1
            if let id = removed, user.id == id {
                removed = nil
                continue
            }
            return user
        }
        defer { appended = nil }
        return appended
    }
}

extension MomentRecord {
    /// `userID`'s like in flight on this moment, if any.
    func intent(of userID: String) -> LikeIntent? {
        intents.isEmpty ? nil : intents.first { $0.liker.id == userID }
    }

    /// The moment as `userID` sees it now, described (see ``LikerView``).
    func likerView(isLiked: Bool?, by userID: String) -> LikerView {
        LikerView(value: value, isLiked: isLiked, intent: intent(of: userID))
    }
}
