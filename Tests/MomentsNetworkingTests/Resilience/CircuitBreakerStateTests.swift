@testable import MomentsNetworking
import MomentsTestSupport
import Testing

/// The circuit breaker's state machine against seeded random orderings of successes,
/// failures, ignored outcomes (cancellations, the caller's faults) and the passing of
/// time, checked step by step against a reference model written from its rules.
@Suite struct CircuitBreakerStateTests {
    @Test(arguments: 0..<200 as Range<UInt64>)
    func everyOrderingFollowsTheRules(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let policy = CircuitBreakerPolicy(
            failureRatio: [0.25, 0.5, 1.0].randomElement(using: &generator) ?? 0.5,
            minimumCalls: Int.random(in: 1...6, using: &generator),
            window: .seconds(Int.random(in: 1...5, using: &generator)),
            openDuration: .milliseconds(Int.random(in: 100...2_000, using: &generator)),
            maximumOpenDuration: .seconds(10),
            probes: Int.random(in: 1...3, using: &generator)
        )
        var breaker = CircuitBreakerState(policy)
        var now = ContinuousClock.now
        var inFlight: [(isProbe: Bool, admittedWhile: CircuitBreakerState.Phase)] = []
        var rejectedWhileClosed = 0
        for step in 0..<300 {
            let context = "seed \(seed) step \(step), phase \(breaker.phase)"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0...3:
                let before = breaker.phase
                switch breaker.admit(now: now) {
                case .allowed(let isProbe):
                    switch before {
                    case .closed: #expect(!isProbe, "\(context)")
                    case .open(let until): #expect(now >= until && isProbe, "\(context): admitted while open")
                    case .halfOpen(let probes): #expect(isProbe && probes < policy.probes, "\(context): too many probes")
                    }
                    inFlight.append((isProbe, before))
                case .rejected(let until):
                    if case .closed = before { rejectedWhileClosed += 1 }
                    #expect(until > now || { if case .halfOpen = before { true } else { false } }(), "\(context): rejected until the past")
                }
            case 4...7:
                guard !inFlight.isEmpty else { continue }
                let call = inFlight.remove(at: Int.random(in: 0..<inFlight.count, using: &generator))
                let outcome: CircuitBreakerState.Outcome = switch Int.random(in: 0..<5, using: &generator) {
                case 0, 1: .success
                case 2, 3: .failure(retryAfter: Bool.random(using: &generator) ? .seconds(Int.random(in: 1...20, using: &generator)) : nil)
                default: .ignored
                }
                let before = breaker.phase
                breaker.record(outcome, isProbe: call.isProbe, now: now)
                if call.isProbe, case .halfOpen = before {
                    switch outcome {
                    case .success: #expect(breaker.phase == .closed, "\(context): a good probe closes it")
                    case .failure(let retryAfter):
                        guard case .open(let until) = breaker.phase else {
                            Issue.record("\(context): a failed probe must open it")
                            continue
                        }
                        let expected = max(policy.openDuration, min(retryAfter ?? .zero, policy.maximumOpenDuration))
                        #expect(until == now + expected, "\(context): open for the probe interval, or Retry-After up to the maximum")
                    case .ignored:
                        if case .halfOpen = breaker.phase {} else { Issue.record("\(context): an ignored probe changes nothing but its slot") }
                    }
                }
                if case .open = before, breaker.phase != before {
                    Issue.record("\(context): an outcome while open changed the phase")
                }
            default:
                now += .milliseconds(Int.random(in: 1...1_500, using: &generator))
            }
            if case .open(let until) = breaker.phase {
                #expect(until <= now + policy.maximumOpenDuration, "\(context): open longer than the maximum")
            }
        }
        #expect(rejectedWhileClosed == 0, "seed \(seed): a closed breaker rejected a call")
    }

    /// The opening rule, counted exactly: with `minimumCalls` outcomes in the window and
    /// at least `failureRatio` of them failures, it opens; outcomes older than the
    /// window, ignored ones and fewer calls do not count.
    @Test func itOpensOnTheFailureRatioOverTheWindowOnly() {
        let policy = CircuitBreakerPolicy(failureRatio: 0.5, minimumCalls: 4, window: .seconds(10), openDuration: .seconds(2))
        var breaker = CircuitBreakerState(policy)
        let start = ContinuousClock.now
        for index in 0..<3 { breaker.record(.failure(retryAfter: nil), isProbe: false, now: start + .milliseconds(index)) }
        #expect(breaker.phase == .closed, "three calls are fewer than the minimum")
        breaker.record(.ignored, isProbe: false, now: start + .seconds(1))
        #expect(breaker.phase == .closed, "an ignored outcome is not a call")
        // Eleven seconds on, the three failures left the window.
        breaker.record(.success, isProbe: false, now: start + .seconds(11))
        breaker.record(.success, isProbe: false, now: start + .seconds(11))
        breaker.record(.failure(retryAfter: nil), isProbe: false, now: start + .seconds(11))
        #expect(breaker.phase == .closed)
        breaker.record(.failure(retryAfter: .seconds(5)), isProbe: false, now: start + .seconds(12))
        #expect(breaker.phase == .open(until: start + .seconds(17)), "two of four failed; Retry-After sets the open time")
        let early = breaker.admit(now: start + .seconds(16))
        #expect(early == .rejected(until: start + .seconds(17)))
        let probe = breaker.admit(now: start + .seconds(17))
        #expect(probe == .allowed(isProbe: true))
        let second = breaker.admit(now: start + .seconds(17))
        #expect(second == .rejected(until: start + .seconds(19)), "one probe at a time")
        breaker.record(.success, isProbe: true, now: start + .seconds(18))
        #expect(breaker.phase == .closed)
    }
}
