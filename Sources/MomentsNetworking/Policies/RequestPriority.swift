/// Which waiting request goes first when a client's concurrency limit is reached.
public enum RequestPriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    case low, normal, high

    /// Whether the first orders before the second.
    public static func < (lhs: RequestPriority, rhs: RequestPriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
