public import Moments

extension MomentsDetails {
    /// `isLiked` of the moment `momentID`, if the timeline holds it.
    public func isLiked(_ momentID: String) -> Bool? { moment(withID: momentID)?.isLiked }

    /// The ids of the users who like the moment `momentID`, if the timeline holds it.
    public func likers(_ momentID: String) -> [String]? { moment(withID: momentID)?.likes?.map(\.id) }
}
