extension Moment {
    /// This moment as it looks after `user` likes (`true`) or unlikes it: `isLiked` set,
    /// and the user added to or removed from `likes`.
    func liked(_ isLiked: Bool, by user: UserDetails) -> Moment {
        var moment = self
        moment.isLiked = isLiked
        var likes = self.likes ?? []
        likes.removeAll { $0.id == user.id }
        if isLiked { likes.append(LikedUser(id: user.id, avatar: user.avatar)) }
        moment.likes = likes
        return moment
    }
}

extension MomentsDetails {
    /// Replaces the moment with `moment.id`, if present; returns whether it was.
    mutating func replace(_ moment: Moment) -> Bool {
        guard let index = moments.firstIndex(where: { $0.id == moment.id }) else { return false }
        moments[index] = moment
        return true
    }

    /// Whether `other` differs from this timeline in the moment `momentID` only.
    func differsOnlyIn(momentID: String, from other: MomentsDetails) -> Bool {
        guard userDetails == other.userDetails, moments.count == other.moments.count else { return false }
        for (mine, theirs) in zip(moments, other.moments) where mine != theirs {
            guard mine.id == momentID, theirs.id == momentID else { return false }
        }
        return true
    }
}
