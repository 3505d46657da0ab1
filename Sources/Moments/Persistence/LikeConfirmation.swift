import Foundation

/// The server's answer to one like or unlike, as storage shared between instances keeps
/// it: the authority for its liker's place in the moment's `likes` against every value
/// not certainly computed after it.
///
/// A like's answer is computed after the like took effect. Another instance may save a
/// value of the same moment that the server computed earlier, yet whose interval
/// overlaps the like's, so storage cannot tell which is newer and keeps the later write
/// (see ``MomentsChangeBus``). Without the confirmation, an instance that showed the
/// like, evicted the moment and loaded it again would show the like undone. With it,
/// the stored value keeps the liker's place in `likes` as the like's answer gave it
/// until a write the server certainly computed after the answer settles it. (A
/// timeline's `isLiked`s are the server's answer for that viewer, kept as written: in a
/// server where `isLiked` is one value per moment, anyone's like changes it.)
public struct LikeConfirmation: Sendable, Hashable, Codable {
    /// The moment liked or unliked.
    public var momentID: String
    /// Who liked or unliked it, as `likes` lists them.
    public var liker: Moment.LikedUser
    /// Whether the answer shows the liker liking the moment.
    public var isLiked: Bool
    /// When the server computed the answer.
    public var confirmedWithin: ConfirmationInterval

    /// The answer to `liker`'s like (`isLiked` true) or unlike of `momentID`, computed
    /// within `interval`.
    public init(momentID: String, liker: Moment.LikedUser, isLiked: Bool, confirmedWithin interval: ConfirmationInterval) {
        self.momentID = momentID
        self.liker = liker
        self.isLiked = isLiked
        self.confirmedWithin = interval
    }

    /// Whether a value the server computed within `interval` certainly came after this
    /// answer, and so settles the liker's register (a value of unknown start never does).
    public func isSettled(by interval: ConfirmationInterval?) -> Bool {
        guard let start = interval?.notBefore else { return false }
        return start > confirmedWithin.notAfter
    }

    /// Whether the server certainly computed this answer after `other`.
    func isCertainlyAfter(_ other: LikeConfirmation) -> Bool {
        guard let start = confirmedWithin.notBefore else { return false }
        return start > other.confirmedWithin.notAfter
    }
}

extension LikeConfirmation {
    /// The confirmations a stored moment keeps once a write confirmed within `interval`
    /// replaces it: the stored ones the write does not settle, and the arriving ones
    /// (an arriving answer of a liker replaces the stored one unless that one is
    /// certainly newer), oldest answer first.
    public static func kept(
        stored: [LikeConfirmation], arriving: [LikeConfirmation], writtenWithin interval: ConfirmationInterval?
    ) -> [LikeConfirmation] {
        var byLiker: [String: LikeConfirmation] = [:]
        for confirmation in stored where !confirmation.isSettled(by: interval) {
            byLiker[confirmation.liker.id] = confirmation
        }
        for confirmation in arriving {
            if let current = byLiker[confirmation.liker.id], current.isCertainlyAfter(confirmation) { continue }
            byLiker[confirmation.liker.id] = confirmation
        }
        return byLiker.values.sorted {
            ($0.confirmedWithin.notAfter, $0.liker.id) < ($1.confirmedWithin.notAfter, $1.liker.id)
        }
    }

    /// When the server computed a stored value whose content was computed within
    /// `content` and whose kept likes' answers override some of its registers: the
    /// smallest interval holding all of them, or `nil` if the content's age is unknown.
    /// Storage announces a row with it, so another instance never takes a register a
    /// kept answer set for one computed as late as the content.
    public static func interval(ofContent content: ConfirmationInterval?, keeping confirmations: [LikeConfirmation]) -> ConfirmationInterval? {
        confirmations.reduce(content) { $0?.union($1.confirmedWithin) }
    }

    /// `moment` with each confirmation's liker added to or removed from `likes` as its
    /// answer gave it (a liker added goes last, in the order of `confirmations`); a
    /// moment whose `likes` are unknown is returned as it is.
    public static func applying(_ confirmations: [LikeConfirmation], to moment: Moment) -> Moment {
        guard var likes = moment.likes, !confirmations.isEmpty else { return moment }
        for confirmation in confirmations where confirmation.momentID == moment.id {
            let index = likes.firstIndex { $0.id == confirmation.liker.id }
            if confirmation.isLiked, index == nil {
                likes.append(confirmation.liker)
            } else if !confirmation.isLiked, let index {
                likes.remove(at: index)
            }
        }
        guard likes != moment.likes else { return moment }
        var confirmed = moment
        confirmed.likes = likes
        return confirmed
    }
}
