@testable import Moments
import MomentsTestSupport
import Testing
import MomentsTestTraits

@Suite(.ownThread) struct EntryListChangeTests {
    private func entries(_ ids: String) -> [StoredTimeline.Entry] {
        ids.map { StoredTimeline.Entry(momentID: String($0)) }
    }

    @Test(arguments: [
        ("abc", "abc", 3..<3, 3..<3),
        ("abc", "xabc", 0..<0, 0..<1),
        ("abc", "ab", 2..<3, 2..<2),
        ("a", "aa", 1..<1, 1..<2),
        ("aa", "a", 1..<2, 1..<1),
        ("ab", "abab", 2..<2, 2..<4),
        ("abc", "cba", 0..<3, 0..<3),
        ("", "ab", 0..<0, 0..<2),
    ])
    func theChangedSpansLeaveOutTheSharedStartAndEnd(old: String, new: String, removed: Range<Int>, inserted: Range<Int>) {
        let change = EntryListChange(from: entries(old), to: entries(new))
        #expect(change.removed == removed && change.inserted == inserted, "\(old) → \(new): \(change.removed), \(change.inserted)")
    }

    /// Over random lists, the span check finds a duplicate exactly when the whole-list check does.
    @Test func theSpanCheckAgreesWithTheWholeListCheck() {
        var random = SeededGenerator(seed: 0xD0B1E)
        let owner = SampleTimelines.timeline(user: "a", moments: 0).userDetails
        for round in 0..<5_000 {
            let alphabet = Array("abcdefgh")
            let old = String(alphabet.shuffled(using: &random).prefix(Int(random.next() % 7)))
            var new = Array(old)
            for _ in 0..<(random.next() % 4) {
                let id = alphabet[Int(random.next() % UInt64(alphabet.count))]
                new.insert(id, at: Int(random.next() % UInt64(new.count + 1)))
            }
            if !new.isEmpty, random.next() % 2 == 0 { new.remove(at: Int(random.next() % UInt64(new.count))) }
            let timeline = StoredTimeline(userDetails: owner, entries: entries(String(new)))
            let change = EntryListChange(from: entries(old), to: timeline.entries)
            #expect((change.duplicate(in: timeline, oldIsDistinct: true) == nil) == (timeline.duplicateMomentID == nil),
                    "round \(round): \(old) → \(String(new))")
        }
    }
}
