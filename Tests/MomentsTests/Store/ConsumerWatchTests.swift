@testable import Moments
import MomentsSupport
import Testing

/// When a mailbox's consumer watches for its next value: only after a wait that ended
/// within the window, and less often after each watch that caught nothing.
@Suite struct ConsumerWatchTests {
    private let window = Duration.microseconds(8)

    /// A wait that begins now: whether it watches.
    private func begins(_ watch: inout ConsumerWatch) -> Bool { watch.beginWait() }

    @Test func aNewConsumerParksAtOnce() {
        var watch = ConsumerWatch(window: window)
        #expect(!begins(&watch))
    }

    @Test func aWaitThatEndedWithinTheWindowLetsTheNextOneWatch() {
        var watch = ConsumerWatch(window: window)
        _ = begins(&watch)
        watch.waitEnded(after: .microseconds(3))
        #expect(begins(&watch))
        watch.watchEnded(caught: true)
        watch.waitEnded(after: .zero)
        #expect(begins(&watch), "a watch that caught keeps watching")
        watch.watchEnded(caught: true)
        watch.waitEnded(after: window)
        #expect(begins(&watch), "a wait of exactly the window is short")
    }

    @Test func aLongWaitParksTheNextOneAtOnce() {
        var watch = ConsumerWatch(window: window)
        _ = begins(&watch)
        watch.waitEnded(after: .milliseconds(5))
        #expect(!begins(&watch))
        watch.waitEnded(after: window + .nanoseconds(1))
        #expect(!begins(&watch))
    }

    /// Values that come just past the window: each watch misses, and the waits after a
    /// miss skip watching 1, 2, 4, … times although each of them was short.
    @Test func missesDoubleTheShortWaitsThatSkipWatching() {
        var watch = ConsumerWatch(window: window)
        _ = begins(&watch)
        watch.waitEnded(after: .microseconds(1))
        var watched: [Bool] = []
        for _ in 0..<12 {
            let watches = begins(&watch)
            watched.append(watches)
            if watches { watch.watchEnded(caught: false) }
            // A short wait: the value came just after the watch ended, or soon after a park.
            watch.waitEnded(after: .microseconds(1))
        }
        #expect(watched == [true, false, true, false, false, true, false, false, false, false, true, false])
        // Once a watch catches, every short wait watches again.
        var skipped = 0
        while !begins(&watch) { skipped += 1 }
        #expect(skipped == 7, "the fifth miss skips 8 waits; the twelfth wait was the first")
        watch.watchEnded(caught: true)
        watch.waitEnded(after: .zero)
        for _ in 0..<5 {
            #expect(begins(&watch))
            watch.watchEnded(caught: true)
            watch.waitEnded(after: .zero)
        }
    }

    @Test func aZeroWindowNeverWatches() {
        var watch = ConsumerWatch(window: .zero)
        for _ in 0..<5 {
            #expect(!begins(&watch))
            watch.waitEnded(after: .zero)
        }
    }
}
