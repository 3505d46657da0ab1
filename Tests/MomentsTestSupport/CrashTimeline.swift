public import Moments

/// Timelines whose every part carries the version of the save that wrote them, so a
/// reader can tell a whole timeline from a torn one.
public enum CrashTimeline {
    public static func make(user: String, version: Int) -> MomentsDetails {
        SampleTimelines.timeline(user: user, moments: momentCount(version), version: version)
    }

    static func momentCount(_ version: Int) -> Int { 20 + version % 37 }

    /// The version a loaded timeline was written with, or `nil` if it is torn.
    /// With `ignoringLikes`, `isLiked` and `likes` may differ (likes change between versions).
    public static func version(of details: MomentsDetails, user: String, ignoringLikes: Bool = false) -> Int? {
        guard let tag = details.userDetails.avatar.split(separator: "/").last?.split(separator: ".").first,
              let version = Int(tag) else { return nil }
        guard ignoringLikes else { return details == make(user: user, version: version) ? version : nil }
        return withoutLikes(details) == withoutLikes(make(user: user, version: version)) ? version : nil
    }

    private static func withoutLikes(_ details: MomentsDetails) -> MomentsDetails {
        var copy = details
        copy.moments = copy.moments.map { moment in
            var moment = moment
            moment.isLiked = nil
            moment.likes = nil
            return moment
        }
        return copy
    }
}
