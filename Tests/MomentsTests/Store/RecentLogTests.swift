@testable import Moments
import Testing

@Suite struct RecentLogTests {
    /// After every append, the log holds the last `capacity` elements appended, oldest first.
    @Test(arguments: [0, 1, 2, 3, 7])
    func theLogHoldsTheLatestElementsOldestFirst(capacity: Int) {
        var log = RecentLog<Int>(capacity: capacity)
        var appended: [Int] = []
        for value in 0..<40 {
            log.append(value)
            appended.append(value)
            let expected = Array(appended.suffix(capacity))
            #expect(Array(log) == expected && log.count == expected.count && log.first == expected.first,
                    "capacity \(capacity), after \(value): \(Array(log))")
        }
    }
}
