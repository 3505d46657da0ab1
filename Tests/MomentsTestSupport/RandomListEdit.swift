/// Seeded edits of a timeline's list of moment ids, for tests that change lists at
/// random: each keeps most of the list, as timelines change.
public enum RandomListEdit {
    /// How many edits ``apply(_:to:ids:using:)`` knows.
    public static let count: UInt64 = 4

    /// Applies edit `kind` (below ``count``) to `list`: 0 inserts one of `ids`, 1
    /// removes a moment, 2 moves one, 3 lists a kept moment a second time.
    public static func apply(_ kind: UInt64, to list: inout [String], ids: [String], using random: inout SeededGenerator) {
        switch kind {
        case 0: list.insert(ids[Int(random.next() % UInt64(ids.count))], at: Int(random.next() % UInt64(list.count + 1)))
        case 1: if !list.isEmpty { list.remove(at: Int(random.next() % UInt64(list.count))) }
        case 2:
            if list.count > 1 {
                let moved = list.remove(at: Int(random.next() % UInt64(list.count)))
                list.insert(moved, at: Int(random.next() % UInt64(list.count + 1)))
            }
        default: if let kept = list.randomElement(using: &random) { list.insert(kept, at: Int(random.next() % UInt64(list.count + 1))) }
        }
    }
}
