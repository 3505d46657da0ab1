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
        case let (left?, right?): return shownLikesEqual(left, lhs.intent, right, rhs.intent)
        default: return false
        }
    }

    /// Whether `left` with `leftIntent` applied and `right` with `rightIntent` applied are
    /// the same list, as ``Moment/setLike(_:by:)`` applies a like in flight (a like adds
    /// its liker at the end if absent, an unlike removes their first entry); read in
    /// place, by index.
    private static func shownLikesEqual(
        _ left: [Moment.LikedUser], _ leftIntent: LikeIntent?, _ right: [Moment.LikedUser], _ rightIntent: LikeIntent?
    ) -> Bool {
        let leftShape = ShownShape(left, intent: leftIntent)
        let rightShape = ShownShape(right, intent: rightIntent)
        guard leftShape.count == rightShape.count else { return false }
        for position in 0..<leftShape.count {
            let leftIndex = leftShape.index(of: position)
            let rightIndex = rightShape.index(of: position)
            switch (leftIndex < left.count, rightIndex < right.count) {
            case (true, true): guard left[leftIndex] == right[rightIndex] else { return false }
            case (true, false): guard let liker = rightIntent?.liker, left[leftIndex] == liker else { return false }
            case (false, true): guard let liker = leftIntent?.liker, right[rightIndex] == liker else { return false }
            case (false, false): guard leftIntent?.liker == rightIntent?.liker else { return false }
            }
        }
        return true
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

/// Where a `likes` list's entries stand once a like in flight is applied: the entry
/// an unlike removes, and whether a like appends its liker (the position past the list).
private struct ShownShape {
    /// The index of the entry removed, if any.
    let removed: Int?
    /// The number of entries shown.
    let count: Int

    init(_ list: [Moment.LikedUser], intent: LikeIntent?) {
        guard let intent else {
            removed = nil
            count = list.count
            return
        }
        let present = list.firstIndex { $0.id == intent.liker.id }
        if intent.isLiked {
            removed = nil
            count = present == nil ? list.count + 1 : list.count
        } else {
            removed = present
            count = present == nil ? list.count : list.count - 1
        }
    }

    /// The list's index of the entry shown at `position` (the list's count for a liker
    /// appended).
    func index(of position: Int) -> Int {
        guard let removed, position >= removed else { return position }
        return position + 1
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
