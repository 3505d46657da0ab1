@testable import MomentsNetworking
import MomentsTestSupport
import Testing

/// The hedging delay's percentile against a sort of the same samples: the selection
/// that replaced the sort must pick the same value, duplicates and all.
@Suite struct LatencyTrackerTests {
    @Test(arguments: 0..<200 as Range<UInt64>)
    func theSelectedSampleIsTheOneASortPutsThere(seed: UInt64) {
        var generator = SeededGenerator(seed: seed)
        let count = Int.random(in: 1...300, using: &generator)
        let spread = [1, 3, 1_000].randomElement(using: &generator) ?? 3
        let samples = (0..<count).map { _ in Duration.milliseconds(Int.random(in: 0..<spread, using: &generator)) }
        let k = Int.random(in: 0..<count, using: &generator)
        var values = samples
        #expect(LatencyTracker.select(k, in: &values) == samples.sorted()[k], "seed \(seed): k \(k) of \(count)")
        #expect(values.sorted() == samples.sorted(), "seed \(seed): the selection lost or made up a sample")
    }

    @Test func theTrackerGivesThePercentileOfItsLatestSamples() {
        var tracker = LatencyTracker()
        #expect(tracker.value(at: 0.95) == nil)
        for latency in (1...300).reversed() { tracker.record(.milliseconds(latency)) }
        // The latest 256 samples are 256 ms down to 1 ms; the 95th percentile is the 244th smallest.
        #expect(tracker.value(at: 0.95) == .milliseconds(244))
        #expect(tracker.value(at: 0.5) == .milliseconds(128))
    }
}
