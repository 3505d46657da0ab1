@testable import Moments
import MomentsTestSupport
import MomentsTesting
import Testing

/// The rules of the mailbox behind `updates(for:)`: a consumer receives values in the
/// order they were delivered, never one older than a value it already had, always the
/// last one delivered before it stops waiting, and the end once the mailbox is finished.
/// The cases run one at a time: each yields a thousand times, and forty of them at once
/// beside the other suites on a loaded machine passed the time limit, which guards
/// against a hang, not a slow scheduler.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LatestValueMailboxTests {
    /// A producer delivers 1...500 while a consumer takes values, each pausing a seeded
    /// number of times between steps, on two threads: whatever the interleaving, the
    /// consumer sees a strictly increasing run of values that ends with the last one.
    @Test(arguments: 0..<40 as Range<UInt64>)
    func aConsumerSeesNewerValuesInOrderAndTheLastOne(seed: UInt64) async {
        await checkInterleaving(of: LatestValueMailbox<Int>(), seed: seed)
    }

    @Test func aWaitingConsumerGetsTheEndWhenTheMailboxIsFinished() async {
        let mailbox = LatestValueMailbox<Int>()
        let waiting = Task { await mailbox.next() }
        // Finished before or while the consumer waits: it ends either way.
        mailbox.finish()
        #expect(await waiting.value == nil)
        mailbox.deliver(1)
        #expect(await mailbox.next() == nil, "nothing is delivered once finished")
    }

    @Test func aValueWaitingIsReplacedByANewerOne() async {
        let mailbox = LatestValueMailbox<Int>()
        mailbox.deliver(1)
        mailbox.deliver(2)
        #expect(await mailbox.next() == 2)
    }

    @Test func aCancelledConsumerStopsWaiting() async {
        let mailbox = LatestValueMailbox<Int>()
        let stream = AsyncStream(unfolding: { await mailbox.next() }, onCancel: { mailbox.finish() })
        let consumer = Task { () -> Int in
            var count = 0
            for await _ in stream { count += 1 }
            return count
        }
        consumer.cancel()
        #expect(await consumer.value == 0)
    }
}

/// The consumer's watch, from outside: a mailbox with a long window (ten seconds), so
/// that a watch lasts until the test acts, and a manual clock for the lengths of waits;
/// each step waits for the state the mailbox reports, never for time.
@Suite(.serialized, .timeLimit(.minutes(5))) struct LatestValueMailboxWatchTests {
    private static let window = Duration.seconds(10)

    /// Yields until `condition` holds.
    private func until(_ condition: () -> Bool) async {
        while !condition() { await Task.yield() }
    }

    /// A wait that parks and is woken with `value` once `clock` moved by `length`; what
    /// the consumer got.
    private func parkedWait(on mailbox: LatestValueMailbox<Int>, for value: Int, lasting length: Duration = .zero,
                            clock: ManualClock? = nil) async -> Int? {
        let consumer = Task.detached { await mailbox.next() }
        await until { mailbox.hasParkedConsumer }
        clock?.advance(by: length)
        mailbox.deliver(value)
        return await consumer.value
    }

    /// A consumer parked on its first wait and woken at once: its next wait watches.
    private func consumerAfterAShortWait() async -> (LatestValueMailbox<Int>, Task<Int?, Never>) {
        let mailbox = LatestValueMailbox<Int>(watchWindow: Self.window, clock: ManualClock())
        _ = await parkedWait(on: mailbox, for: 1)
        let second = Task.detached { await mailbox.next() }
        await until { mailbox.waits.watched == 1 }
        return (mailbox, second)
    }

    @Test func aNewConsumerParksWithoutWatching() async {
        let mailbox = LatestValueMailbox<Int>(watchWindow: Self.window)
        #expect(await parkedWait(on: mailbox, for: 1) == 1)
        #expect(mailbox.waits == .init(parked: 1, watched: 0, caught: 0))
    }

    @Test func aConsumerWhoseLastWaitWasLongParksAtOnce() async {
        let clock = ManualClock()
        let mailbox = LatestValueMailbox<Int>(watchWindow: Self.window, clock: clock)
        #expect(await parkedWait(on: mailbox, for: 1, lasting: Self.window + .seconds(1), clock: clock) == 1)
        #expect(await parkedWait(on: mailbox, for: 2) == 2)
        #expect(mailbox.waits == .init(parked: 2, watched: 0, caught: 0))
    }

    @Test func aConsumerWhoseLastWaitWasShortCatchesItsNextValueWithoutParking() async {
        let (mailbox, consumer) = await consumerAfterAShortWait()
        mailbox.deliver(2)
        #expect(await consumer.value == 2)
        #expect(mailbox.waits == .init(parked: 1, watched: 1, caught: 1))
        #expect(!mailbox.hasParkedConsumer)
    }

    @Test func finishingTheMailboxEndsAWatch() async {
        let (mailbox, consumer) = await consumerAfterAShortWait()
        mailbox.finish()
        #expect(await consumer.value == nil)
    }

    @Test func cancellingTheConsumerEndsItsWatch() async {
        let (mailbox, consumer) = await consumerAfterAShortWait()
        consumer.cancel()
        #expect(await consumer.value == nil)
        #expect(mailbox.waits.parked == 1, "it never parked again")
    }

    /// The interleavings of the first suite, with a watch long enough to catch most
    /// values: the consumer still sees an increasing run that ends with the last value.
    @Test(arguments: 0..<10 as Range<UInt64>)
    func aWatchingConsumerSeesNewerValuesInOrderAndTheLastOne(seed: UInt64) async {
        await checkInterleaving(of: LatestValueMailbox<Int>(watchWindow: .milliseconds(1)), seed: seed &+ 1_000)
    }
}

/// A producer delivers 1...500 while a consumer takes values, each pausing a seeded
/// number of times between steps, on two threads: the consumer must see a strictly
/// increasing run of values that ends with the last one.
private func checkInterleaving(of mailbox: LatestValueMailbox<Int>, seed: UInt64) async {
    let last = 500
    let consumer = Task.detached { () -> [Int] in
        var random = SeededGenerator(seed: seed &* 7 &+ 1)
        var seen: [Int] = []
        while seen.last != last, let value = await mailbox.next() {
            seen.append(value)
            for _ in 0..<Int.random(in: 0...2, using: &random) { await Task.yield() }
        }
        return seen
    }
    let producer = Task.detached {
        var random = SeededGenerator(seed: seed)
        for value in 1...last {
            mailbox.deliver(value)
            for _ in 0..<Int.random(in: 0...2, using: &random) { await Task.yield() }
        }
    }
    await producer.value
    let seen = await consumer.value
    #expect(seen.last == last, "seed \(seed): the consumer stopped at \(String(describing: seen.last))")
    #expect(zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }, "seed \(seed): not strictly increasing: \(seen)")
}
