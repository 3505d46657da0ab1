/// A user's timeline: who they are and their moments, newest first as the BFF orders them.
public struct MomentsDetails: Codable, Sendable, Hashable {
    public var userDetails: UserDetails
    public var moments: [Moment]

    public init(userDetails: UserDetails, moments: [Moment]) {
        self.userDetails = userDetails
        self.moments = moments
    }

    /// The moment with `id`, if this timeline holds it.
    public func moment(withID id: String) -> Moment? {
        moments.first { $0.id == id }
    }
}
