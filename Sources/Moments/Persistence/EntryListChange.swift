/// Where a timeline's new list of entries differs from its old one: everything but the
/// longest run of moment ids the two lists share at their start and at their end.
///
/// A refreshed timeline usually keeps most of its list (a moment added at the top, one
/// removed), so a persistence that counts holders or checks ids can work on the changed
/// span alone, with string comparisons and no hashing.
struct EntryListChange {
    /// The old list's entries that the new list does not keep in place.
    let removed: Range<Int>
    /// The new list's entries that the old list did not have in place.
    let inserted: Range<Int>

    /// The change from `old` to `new`.
    init(from old: [StoredTimeline.Entry], to new: [StoredTimeline.Entry]) {
        let shorter = min(old.count, new.count)
        var prefix = 0
        while prefix < shorter, old[prefix].momentID == new[prefix].momentID { prefix += 1 }
        var suffix = 0
        while suffix < shorter - prefix, old[old.count - 1 - suffix].momentID == new[new.count - 1 - suffix].momentID { suffix += 1 }
        removed = prefix..<(old.count - suffix)
        inserted = prefix..<(new.count - suffix)
    }

    /// A new list with no old one: every entry inserted.
    init(inserting new: [StoredTimeline.Entry]) {
        removed = 0..<0
        inserted = new.indices
    }

    /// The first moment id the new list (`timeline`'s) lists twice. When the old list
    /// listed each id once (`oldIsDistinct`), its kept entries are distinct, and for a
    /// small inserted span each inserted id is compared with every other entry;
    /// otherwise the whole list is checked.
    func duplicate(in timeline: StoredTimeline, oldIsDistinct: Bool) -> String? {
        guard oldIsDistinct, inserted.count <= 8 else { return timeline.duplicateMomentID }
        let new = timeline.entries
        for index in inserted {
            let id = new[index].momentID
            for other in new.indices where other != index && new[other].momentID == id {
                // Two kept entries cannot be equal, so `other` is inserted or kept: either way a duplicate.
                return id
            }
        }
        return nil
    }
}
