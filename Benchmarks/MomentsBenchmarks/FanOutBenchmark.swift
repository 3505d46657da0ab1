import Foundation
import Moments
import Synchronization

/// One change of a user's timeline reaching 1, 100 and 10,000 subscribers through
/// `MomentsStore`, beside a raw `AsyncStream` fan-out of the same values.
enum FanOutBenchmark {
    /// Answers every refresh at once with the next of two timelines.
    actor AlternatingService: MomentsService {
        let timelines: [MomentsDetails]
        var next = 0
        init(_ timelines: [MomentsDetails]) { self.timelines = timelines }
        func getMoments(userID: String) -> MomentsDetails {
            next += 1
            return timelines[next % timelines.count]
        }
        func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails { timelines[0] }
    }

    /// Counts deliveries; the producer waits (without spinning) until a count is reached.
    final class Deliveries: Sendable {
        private struct State {
            var received = 0
            var target = Int.max
            var waiter: CheckedContinuation<Void, Never>?
        }

        private let state = Mutex(State())

        func deliver() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.received += 1
                guard state.received >= state.target, let waiter = state.waiter else { return nil }
                state.waiter = nil
                return waiter
            }
            waiter?.resume()
        }

        func wait(for count: Int) async {
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.received >= count { return true }
                    state.target = count
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    static func run() async -> [Row] {
        var rows: [Row] = []
        let values = [BenchmarkData.timeline(moments: 20), BenchmarkData.timeline(user: "0", moments: 21)]
        for subscribers in [1, 100, 10_000] {
            let changes = subscribers == 10_000 ? 20 : (subscribers == 100 ? 400 : 4_000)
            let pair = await Harness.compare(
                sdk: { await store(subscribers: subscribers, changes: changes, values: values) },
                baseline: { await raw(subscribers: subscribers, changes: changes, values: values) }
            )
            // With one subscriber each change's whole cost shows, refresh included; with many, delivery dominates.
            rows.append(Harness.row("store fan-out, \(subscribers) subscriber\(subscribers == 1 ? "" : "s")", unit: "deliveries/s", pair,
                                    target: subscribers == 1 ? 0.60 : 0.80))
        }
        return rows
    }

    /// One subscriber's deliveries through the store for `changes` changes, for a
    /// profiler to watch. `SUBSCRIBERS=N` changes the count (0: the store's refreshes
    /// alone); `BASELINE=1` profiles the raw `AsyncStream` fan-out instead, and with
    /// `WORK_NS=N` its producer first works N ns per change (spinning), to see what
    /// delivery costs at the store's pace. Reports context switches per change too.
    static func profile(changes: Int) async -> [Row] {
        let values = [BenchmarkData.timeline(moments: 20), BenchmarkData.timeline(user: "0", moments: 21)]
        let environment = ProcessInfo.processInfo.environment
        let subscribers = environment["SUBSCRIBERS"].flatMap(Int.init) ?? 1
        let workNanoseconds = environment["WORK_NS"].flatMap(Int.init) ?? 0
        let work = Duration.nanoseconds(workNanoseconds)
        let switches = ContextSwitches.total()
        let rate = environment["BASELINE"] == "1"
            ? await raw(subscribers: subscribers, changes: changes, values: values, work: work)
            : await store(subscribers: subscribers, changes: changes, values: values)
        let perChange = Double(ContextSwitches.total() - switches) / Double(changes)
        let name = environment["BASELINE"] == "1" ? "raw AsyncStream" : "store"
        let worked = workNanoseconds > 0 ? String(format: ", %.1f µs work", Double(workNanoseconds) / 1_000) : ""
        return [Harness.row("\(name) fan-out profile, \(subscribers) sub.\(worked)", unit: "deliveries/s", (rate, rate, 1), target: nil,
                            note: String(format: "%.1f µs per change, %.2f context switches", 1e6 / rate, perChange))]
    }

    /// Deliveries per second: each change is awaited until all subscribers received it.
    private static func store(subscribers: Int, changes: Int, values: [MomentsDetails]) async -> Double {
        let store = MomentsStore(service: AlternatingService(values), persistence: InMemoryPersistence())
        _ = try? await store.refresh(userID: "0")
        let deliveries = Deliveries()
        var consumers: [Task<Void, Never>] = []
        for _ in 0..<subscribers {
            let stream = await store.updates(for: "0")
            consumers.append(Task { for await _ in stream { deliveries.deliver() } })
        }
        await waitFor(deliveries, subscribers)
        let seconds = await Harness.time {
            for change in 1...changes {
                _ = try? await store.refresh(userID: "0")
                await waitFor(deliveries, subscribers * (change + 1))
            }
        }
        consumers.forEach { $0.cancel() }
        return Double(changes * max(subscribers, 1)) / seconds
    }

    private static func raw(subscribers: Int, changes: Int, values: [MomentsDetails], work: Duration = .zero) async -> Double {
        let deliveries = Deliveries()
        var continuations: [AsyncStream<MomentsDetails>.Continuation] = []
        var consumers: [Task<Void, Never>] = []
        for _ in 0..<subscribers {
            let (stream, continuation) = AsyncStream<MomentsDetails>.makeStream(bufferingPolicy: .bufferingNewest(1))
            continuations.append(continuation)
            consumers.append(Task { for await _ in stream { deliveries.deliver() } })
        }
        for continuation in continuations { continuation.yield(values[0]) }
        await waitFor(deliveries, subscribers)
        let seconds = await Harness.time {
            for change in 1...changes {
                let value = values[change % values.count]
                if work > .zero { spin(for: work) }
                for continuation in continuations { continuation.yield(value) }
                await waitFor(deliveries, subscribers * (change + 1))
            }
        }
        continuations.forEach { $0.finish() }
        consumers.forEach { $0.cancel() }
        return Double(changes * subscribers) / seconds
    }

    /// Keeps the thread busy for `duration`, as a producer with work to do would.
    private static func spin(for duration: Duration) {
        let clock = ContinuousClock()
        let start = clock.now
        while clock.now - start < duration {}
    }

    private static func waitFor(_ deliveries: Deliveries, _ count: Int) async {
        await deliveries.wait(for: count)
    }
}
