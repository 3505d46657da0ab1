public import Foundation

/// One post in a timeline.
public struct Moment: Codable, Sendable, Hashable, Identifiable {
    /// The author of a moment.
    public struct MomentUserDetails: Codable, Sendable, Hashable {
        public var id: String
        public var name: String
        public var avatar: String

        public init(id: String, name: String, avatar: String) {
            self.id = id
            self.name = name
            self.avatar = avatar
        }
    }

    /// A user who liked a moment. The BFF gives only these two fields.
    public struct LikedUser: Codable, Sendable, Hashable, Identifiable {
        public var id: String
        public var avatar: String

        public init(id: String, avatar: String) {
            self.id = id
            self.avatar = avatar
        }
    }

    public var id: String
    public var userDetails: MomentUserDetails
    public var type: MomentType
    /// The title; `nil` when the BFF sends `null` or leaves it out.
    public var title: String?
    /// The link of a `URL` moment; `nil` when the BFF sends `null` or leaves it out.
    public var url: String?
    /// URLs of the photos, possibly none.
    public var photos: [String]
    /// When the moment was posted, in Unix seconds, exactly as the BFF sent it.
    public var createdDate: String
    /// Whether the timeline's owner liked this moment; `nil` when likes were not requested.
    public var isLiked: Bool?
    /// Who liked this moment; `nil` when likes were not requested.
    public var likes: [LikedUser]?

    public init(
        id: String,
        userDetails: MomentUserDetails,
        type: MomentType,
        title: String? = nil,
        url: String? = nil,
        photos: [String] = [],
        createdDate: String,
        isLiked: Bool? = nil,
        likes: [LikedUser]? = nil
    ) {
        self.id = id
        self.userDetails = userDetails
        self.type = type
        self.title = title
        self.url = url
        self.photos = photos
        self.createdDate = createdDate
        self.isLiked = isLiked
        self.likes = likes
    }

    /// ``createdDate`` as a `Date`, or `nil` if it is not a number of seconds.
    public var createdAt: Date? {
        guard let seconds = TimeInterval(createdDate), seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }
}
