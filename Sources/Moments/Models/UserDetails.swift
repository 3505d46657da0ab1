/// A user of Moments, as the BFF describes the owner of a timeline.
///
/// A value like any other: its fields live in one shared, immutable box, so copying a
/// timeline's owner (every snapshot, every write and every answer carries one) retains
/// one reference instead of four strings, and setting a field makes a new box.
public struct UserDetails: Codable, Sendable, Hashable, Identifiable {
    /// The fields, shared by every copy; never changed once made.
    private final class Fields: Sendable {
        let id: String
        let name: String
        let avatar: String
        let backgroundImage: String

        init(id: String, name: String, avatar: String, backgroundImage: String) {
            self.id = id
            self.name = name
            self.avatar = avatar
            self.backgroundImage = backgroundImage
        }
    }

    private var fields: Fields

    /// The user's id, as the BFF knows it.
    public var id: String {
        get { fields.id }
        set { fields = Fields(id: newValue, name: name, avatar: avatar, backgroundImage: backgroundImage) }
    }

    /// The user's display name.
    public var name: String {
        get { fields.name }
        set { fields = Fields(id: id, name: newValue, avatar: avatar, backgroundImage: backgroundImage) }
    }

    /// The URL of the user's avatar image.
    public var avatar: String {
        get { fields.avatar }
        set { fields = Fields(id: id, name: name, avatar: newValue, backgroundImage: backgroundImage) }
    }

    /// The URL of the image shown behind the user's timeline.
    public var backgroundImage: String {
        get { fields.backgroundImage }
        set { fields = Fields(id: id, name: name, avatar: avatar, backgroundImage: newValue) }
    }

    /// A user with every field given.
    public init(id: String, name: String, avatar: String, backgroundImage: String) {
        fields = Fields(id: id, name: name, avatar: avatar, backgroundImage: backgroundImage)
    }

    private enum CodingKeys: String, CodingKey {
        case id, name, avatar, backgroundImage
    }

    /// Decodes the four fields, each required.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), name: try container.decode(String.self, forKey: .name),
            avatar: try container.decode(String.self, forKey: .avatar),
            backgroundImage: try container.decode(String.self, forKey: .backgroundImage)
        )
    }

    /// Encodes the four fields.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(avatar, forKey: .avatar)
        try container.encode(backgroundImage, forKey: .backgroundImage)
    }

    /// Whether every field is equal (at once for copies of one value).
    public static func == (lhs: UserDetails, rhs: UserDetails) -> Bool {
        lhs.fields === rhs.fields
            || (lhs.id == rhs.id && lhs.name == rhs.name && lhs.avatar == rhs.avatar && lhs.backgroundImage == rhs.backgroundImage)
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(id)
        hasher.combine(name)
        hasher.combine(avatar)
        hasher.combine(backgroundImage)
    }
}

extension UserDetails: CustomStringConvertible {
    /// The fields, as a struct of four strings would print them.
    public var description: String {
        "UserDetails(id: \(String(reflecting: id)), name: \(String(reflecting: name)), avatar: \(String(reflecting: avatar)), backgroundImage: \(String(reflecting: backgroundImage)))"
    }
}
