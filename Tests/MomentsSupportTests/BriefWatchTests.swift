import MomentsSupport
import Testing

@Suite struct BriefWatchTests {
    /// Replays `outcomes` (whether each watch would catch its event) and returns, for
    /// each idle moment, whether the policy watched.
    private func watched(_ outcomes: [Bool], window: Duration = .microseconds(50)) -> [Bool] {
        var policy = BriefWatch(window: window)
        var result: [Bool] = []
        for caught in outcomes {
            let watches = policy.shouldWatch()
            result.append(watches)
            if watches { policy.record(caught: caught) }
        }
        return result
    }

    @Test func aWatchThatCatchesKeepsWatchingEveryTime() {
        #expect(watched(Array(repeating: true, count: 20)) == Array(repeating: true, count: 20))
    }

    @Test func missesDoubleTheIdleMomentsSkippedAndACatchResetsThem() {
        // Miss, skip 1; miss, skip 2; miss, skip 4; a catch: watching every time again;
        // a miss skips 1 again.
        let outcomes = [false, false, false, false, false, false, false, false, false, false, true, true, false, false, true]
        let expected = [true, false, true, false, false, true, false, false, false, false, true, true, true, false, true]
        #expect(watched(outcomes) == expected)
        // Four misses in a row: the fourth skips 8.
        #expect(watched(Array(repeating: false, count: 20)) == [true, false, true, false, false, true, false, false, false, false,
                                                                true, false, false, false, false, false, false, false, false, true])
    }

    @Test func anAlwaysSlowServerIsWatchedAtMostOnceInAThousandIdleMomentsAtLength() {
        let moments = 100_000
        let watches = watched(Array(repeating: false, count: moments)).filter { $0 }.count
        // 1 + 2 + … + 1,024 skips: 11 watches, then one per 1,025 idle moments.
        #expect(watches <= 11 + moments / (BriefWatch.maximumSkips + 1) + 1)
        #expect(watches >= moments / (BriefWatch.maximumSkips + 1))
    }

    @Test func aZeroWindowNeverWatches() {
        #expect(watched([true, true, false, true], window: .zero) == [false, false, false, false])
    }

    @Test func aWatchEndsWhenTheEventHappensOrTheWindowEnds() {
        let policy = BriefWatch(window: .milliseconds(5))
        var looks = 0
        #expect(policy.watch { looks += 1; return looks == 3 })
        #expect(looks == 3)
        let start = ContinuousClock.now
        #expect(!policy.watch(looksPerClockRead: 16) { false })
        #expect(ContinuousClock.now - start >= .milliseconds(5))
    }
}
