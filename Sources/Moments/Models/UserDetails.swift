/// A user of Moments, as the BFF describes the owner of a timeline.
public struct UserDetails: Codable, Sendable, Hashable, Identifiable {
    /// The user's id, as the BFF knows it.
    public var id: String
    /// The user's display name.
    public var name: String
    /// The URL of the user's avatar image.
    public var avatar: String
    /// The URL of the image shown behind the user's timeline.
    public var backgroundImage: String

    /// A user with every field given.
    public init(id: String, name: String, avatar: String, backgroundImage: String) {
        self.id = id
        self.name = name
        self.avatar = avatar
        self.backgroundImage = backgroundImage
    }
}
