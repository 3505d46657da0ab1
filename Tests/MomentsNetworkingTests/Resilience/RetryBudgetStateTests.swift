@testable import MomentsNetworking
import MomentsTestSupport
import Testing

/// The retry budget against seeded random traffic: however calls and retries
/// interleave, retries never exceed what the budget earned (its starting balance, the
/// ratio of the calls, and the floor over the time elapsed).
@Suite struct RetryBudgetStateTests {
    @Test(arguments: 0..<200 as Range<UInt64>)
    func retriesNeverExceedWhatWasEarned(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let budget = RetryBudget(
            ratio: [0, 0.05, 0.1, 0.5].randomElement(using: &generator) ?? 0.1,
            minimumPerSecond: [0, 1, 3].randomElement(using: &generator) ?? 1,
            maximumBalance: Double(Int.random(in: 1...20, using: &generator))
        )
        let start = ContinuousClock.now
        var now = start
        var state = RetryBudgetState(budget, now: now)
        var calls = 0
        var retries = 0
        var refused = 0
        for _ in 0..<2_000 {
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...3:
                state.deposit()
                calls += 1
            case 4...8:
                if state.withdraw(now: now) { retries += 1 } else { refused += 1 }
            default:
                now += .milliseconds(Int.random(in: 0...300, using: &generator))
            }
            let elapsed = Double((now - start).components.seconds) + Double((now - start).components.attoseconds) / 1e18
            let earned = budget.maximumBalance + budget.ratio * Double(calls) + max(1, budget.minimumPerSecond) + budget.minimumPerSecond * elapsed
            #expect(Double(retries) <= earned + 1e-9, "seed \(seed): \(retries) retries, \(earned) earned")
        }
        #expect(refused > 0 || budget.ratio >= 0.5, "seed \(seed): the budget never refused, so the test proved little")
    }

    @Test func anEmptyBudgetRefusesUntilCallsOrTimeEarnMore() {
        let start = ContinuousClock.now
        var state = RetryBudgetState(RetryBudget(ratio: 0.5, minimumPerSecond: 1, maximumBalance: 2), now: start)
        var granted: [Bool] = []
        granted.append(state.withdraw(now: start))
        granted.append(state.withdraw(now: start))
        #expect(granted == [true, true], "the starting balance")
        let floor = state.withdraw(now: start)
        #expect(floor, "the floor's token")
        let empty = state.withdraw(now: start)
        #expect(!empty, "empty")
        state.deposit()
        let half = state.withdraw(now: start)
        #expect(!half, "half a retry is not one")
        state.deposit()
        let earned = state.withdraw(now: start)
        #expect(earned, "two calls earned one")
        let tooSoon = state.withdraw(now: start + .milliseconds(500))
        #expect(!tooSoon)
        let refilled = state.withdraw(now: start + .milliseconds(1_000))
        #expect(refilled, "a second of floor")
    }
}
