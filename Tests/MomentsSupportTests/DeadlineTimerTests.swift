@testable import MomentsNetworking
import MomentsSupport
import MomentsTestSupport
import Testing

/// The shared timer behind deadlines and hedging delays, against seeded random traffic:
/// actions scheduled and cancelled in any order (as finished requests cancel theirs
/// before they are due) run exactly when not cancelled, never before their time; a
/// cancelled one may have run only if it was already due when cancelled.
@Suite struct DeadlineTimerTests {
    @Test(arguments: 0..<5)
    func exactlyTheActionsNotCancelledRunAndNoneEarly(seed: UInt64) async {
        var generator = SeededGenerator(seed: seed)
        let timer = DeadlineTimer()
        let ran = PThreadMutex<[Int: ContinuousClock.Instant]>([:])
        var due: [Int: ContinuousClock.Instant] = [:]
        var cancelledAt: [Int: (due: ContinuousClock.Instant, at: ContinuousClock.Instant)] = [:]
        var tokens: [Int: UInt64] = [:]
        for index in 0..<400 {
            let delay = Duration.microseconds(Int.random(in: 0...30_000, using: &generator))
            due[index] = ContinuousClock.now + delay
            tokens[index] = timer.schedule(after: delay) { ran.withLock { $0[index] = .now } }
            // Most requests finish before their deadline and cancel it: any of them, or the
            // one just scheduled (a call answered at once).
            let roll = Int.random(in: 0..<10, using: &generator)
            let victim = roll < 4 ? tokens.keys.randomElement(using: &generator) : roll < 8 ? index : nil
            if let victim, let token = tokens.removeValue(forKey: victim) {
                timer.cancel(token)
                // Taken after the call: an action may have fired before it returned.
                cancelledAt[victim] = (due[victim]!, .now)
                due[victim] = nil
            }
        }
        let live = Set(due.keys)
        let finished = await eventually { ran.withLock { Set($0.keys) }.isSuperset(of: live) }
        #expect(finished, "seed \(seed): \(live.subtracting(ran.withLock { Set($0.keys) }).count) live actions never ran")
        let ranAt = ran.withLock { $0 }
        for index in Set(ranAt.keys).subtracting(live) {
            let cancelled = cancelledAt[index]!
            #expect(cancelled.due <= cancelled.at, "seed \(seed): action \(index) ran though cancelled before it was due")
        }
        for (index, instant) in ranAt where live.contains(index) {
            #expect(instant >= due[index]! - .microseconds(50), "seed \(seed): action \(index) ran early")
        }
        #expect(timer.pendingCount == 0)
    }
}
