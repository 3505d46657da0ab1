public import Foundation

/// One post in a timeline.
///
/// A value type whose content (everything but ``isLiked``) lives in one shared,
/// immutable box: copying a moment costs one reference count, and two moments decoded
/// or stored from the same value compare equal by identity before comparing fields.
/// Setting a content property makes a new box for that moment alone.
public struct Moment: Sendable, Hashable, Identifiable {
    /// The author of a moment.
    public struct MomentUserDetails: Codable, Sendable, Hashable {
        /// The author's id; `nil` when the answer leaves it out (the BFF's own sample
        /// answer names an author by `name` and `avatar` only).
        public var id: String?
        /// The author's display name.
        public var name: String
        /// The URL of the author's avatar image.
        public var avatar: String

        /// An author with every field given (`id` may be unknown).
        public init(id: String?, name: String, avatar: String) {
            self.id = id
            self.name = name
            self.avatar = avatar
        }
    }

    /// A user who liked a moment. The BFF gives only these two fields.
    public struct LikedUser: Codable, Sendable, Hashable, Identifiable {
        /// The user's id.
        public var id: String
        /// The URL of the user's avatar image.
        public var avatar: String

        /// A liker with every field given.
        public init(id: String, avatar: String) {
            self.id = id
            self.avatar = avatar
        }
    }

    /// The fields of a moment but `isLiked`, compared in an order that fails fast.
    struct Fields: Hashable {
        var id: String
        var createdDate: String
        var type: MomentType
        var title: String?
        var url: String?
        var userDetails: MomentUserDetails
        var photos: [String]
        var likes: [LikedUser]?
    }

    /// The content shared by copies: one immutable ``Fields`` value, so a box is safe to
    /// share between threads, and a setter makes a new box.
    final class Content: Sendable {
        let fields: Fields

        init(_ fields: Fields) { self.fields = fields }

        /// A copy with the fields `change` sets replaced.
        func with(_ change: (inout Fields) -> Void) -> Content {
            var fields = self.fields
            change(&fields)
            return Content(fields)
        }

        func isEqual(to other: Content) -> Bool {
            self === other || fields == other.fields
        }
    }

    private(set) var content: Content

    /// Whether the timeline's owner liked this moment; `nil` when likes were not requested.
    public var isLiked: Bool?

    /// The moment's id, unique across timelines.
    public var id: String {
        get { content.fields.id }
        set { content = content.with { $0.id = newValue } }
    }

    /// The author.
    public var userDetails: MomentUserDetails {
        get { content.fields.userDetails }
        set { content = content.with { $0.userDetails = newValue } }
    }

    /// What the moment shows: a link or photos.
    public var type: MomentType {
        get { content.fields.type }
        set { content = content.with { $0.type = newValue } }
    }

    /// The title; `nil` when the BFF sends `null` or leaves it out.
    public var title: String? {
        get { content.fields.title }
        set { content = content.with { $0.title = newValue } }
    }

    /// The link of a `URL` moment; `nil` when the BFF sends `null` or leaves it out.
    public var url: String? {
        get { content.fields.url }
        set { content = content.with { $0.url = newValue } }
    }

    /// URLs of the photos, possibly none.
    public var photos: [String] {
        get { content.fields.photos }
        set { content = content.with { $0.photos = newValue } }
    }

    /// When the moment was posted, in Unix seconds, exactly as the BFF sent it.
    public var createdDate: String {
        get { content.fields.createdDate }
        set { content = content.with { $0.createdDate = newValue } }
    }

    /// Who liked this moment; `nil` when likes were not requested.
    public var likes: [LikedUser]? {
        get { content.fields.likes }
        set { content = content.with { $0.likes = newValue } }
    }

    /// A moment with every field; `isLiked` and `likes` are `nil` when the query left likes out.
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
        content = Content(Fields(id: id, createdDate: createdDate, type: type, title: title, url: url,
                                 userDetails: userDetails, photos: photos, likes: likes))
        self.isLiked = isLiked
    }

    /// ``createdDate`` as a `Date`, or `nil` if it is not a number of seconds.
    public var createdAt: Date? {
        guard let seconds = TimeInterval(createdDate), seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// Whether this moment and `other` have the same content, `isLiked` aside.
    func hasSameContent(as other: Moment) -> Bool {
        content.isEqual(to: other.content)
    }

    /// Whether the two are equal.
    public static func == (lhs: Moment, rhs: Moment) -> Bool {
        lhs.isLiked == rhs.isLiked && lhs.content.isEqual(to: rhs.content)
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(content.fields)
        hasher.combine(isLiked)
    }
}

extension Moment: Codable {
    private enum CodingKeys: String, CodingKey {
        case id, userDetails, type, title, url, photos, createdDate, isLiked, likes
    }

    /// Decodes the value from its JSON form.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id),
            userDetails: try container.decode(MomentUserDetails.self, forKey: .userDetails),
            type: try container.decode(MomentType.self, forKey: .type),
            title: try container.decodeIfPresent(String.self, forKey: .title),
            url: try container.decodeIfPresent(String.self, forKey: .url),
            photos: try container.decode([String].self, forKey: .photos),
            createdDate: try container.decode(String.self, forKey: .createdDate),
            isLiked: try container.decodeIfPresent(Bool.self, forKey: .isLiked),
            likes: try container.decodeIfPresent([LikedUser].self, forKey: .likes)
        )
    }

    /// Encodes the value in its JSON form.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(userDetails, forKey: .userDetails)
        try container.encode(type, forKey: .type)
        try container.encodeIfPresent(title, forKey: .title)
        try container.encodeIfPresent(url, forKey: .url)
        try container.encode(photos, forKey: .photos)
        try container.encode(createdDate, forKey: .createdDate)
        try container.encodeIfPresent(isLiked, forKey: .isLiked)
        try container.encodeIfPresent(likes, forKey: .likes)
    }
}
