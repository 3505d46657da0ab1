/// A user of Moments, as the BFF describes the owner of a timeline.
///
/// A value like any other: its fields live in one shared, immutable box, so copying a
/// timeline's owner (every snapshot, every write and every answer carries one) retains
/// one reference instead of four strings, and setting a field makes a new box.
public struct UserDetails: Codable, Sendable, Hashable, Identifiable {
    /// The four fields; their synthesized conformances are the user's.
    private struct Fields: Codable, Sendable, Hashable {
        var id: String
        var name: String
        var avatar: String
        var backgroundImage: String
    }

    /// The fields, shared by every copy; never changed once made.
    private final class Box: Sendable {
        let fields: Fields
        init(_ fields: Fields) { self.fields = fields }
    }

    private var box: Box

    /// The user's id, as the BFF knows it.
    public var id: String {
        get { box.fields.id }
        set { change { $0.id = newValue } }
    }

    /// The user's display name.
    public var name: String {
        get { box.fields.name }
        set { change { $0.name = newValue } }
    }

    /// The URL of the user's avatar image.
    public var avatar: String {
        get { box.fields.avatar }
        set { change { $0.avatar = newValue } }
    }

    /// The URL of the image shown behind the user's timeline.
    public var backgroundImage: String {
        get { box.fields.backgroundImage }
        set { change { $0.backgroundImage = newValue } }
    }

    /// A user with every field given.
    public init(id: String, name: String, avatar: String, backgroundImage: String) {
        box = Box(Fields(id: id, name: name, avatar: avatar, backgroundImage: backgroundImage))
    }

    /// Puts the fields, changed, in a new box: copies made before keep the old one.
    private mutating func change(_ update: (inout Fields) -> Void) {
        var fields = box.fields
        update(&fields)
        box = Box(fields)
    }

    /// Decodes the four fields (`id`, `name`, `avatar`, `backgroundImage`), each required.
    public init(from decoder: any Decoder) throws {
        box = Box(try Fields(from: decoder))
    }

    /// Encodes the four fields under their names.
    public func encode(to encoder: any Encoder) throws {
        try box.fields.encode(to: encoder)
    }

    /// Whether every field is equal (at once for copies of one value).
    public static func == (lhs: UserDetails, rhs: UserDetails) -> Bool {
        lhs.box === rhs.box || lhs.box.fields == rhs.box.fields
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(box.fields)
    }
}

extension UserDetails: CustomStringConvertible {
    /// The fields, as a struct of four strings would print them.
    public var description: String {
        "UserDetails(id: \(String(reflecting: id)), name: \(String(reflecting: name)), avatar: \(String(reflecting: avatar)), "
            + "backgroundImage: \(String(reflecting: backgroundImage)))"
    }
}
