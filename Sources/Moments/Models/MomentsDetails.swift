/// A user's timeline: who they are and their moments, newest first as the BFF orders them.
public struct MomentsDetails: Codable, Sendable, Hashable {
    /// The owner of the timeline.
    public var userDetails: UserDetails
    /// The moments, in the BFF's order.
    public var moments: [Moment]

    /// A timeline of `moments` owned by `userDetails`.
    public init(userDetails: UserDetails, moments: [Moment]) {
        self.userDetails = userDetails
        self.moments = moments
    }

    /// The moment with `id`, if this timeline holds it.
    public func moment(withID id: String) -> Moment? {
        moments.first { $0.id == id }
    }
}
