import Foundation
import Moments

/// ``MomentsStore/changes()``: one change reaching 1, 100 and 10,000 consumers through
/// the store's change feed, beside a raw `AsyncStream` fan-out of the same values; and
/// the end-to-end cost of one change (an in-memory `setLike` to its delivery at one
/// consumer) beside a bare actor call plus `yield`.
enum ChangeFeedBenchmark {
    static func run() async -> [Row] {
        var rows: [Row] = []
        for consumers in [1, 100, 10_000] {
            let changes = consumers == 10_000 ? 20 : (consumers == 100 ? 400 : 8_000)
            let pair = await Harness.compare(
                sdk: { await feed(consumers: consumers, changes: changes) },
                baseline: { await raw(consumers: consumers, changes: changes) }
            )
            rows.append(Harness.row("changes() fan-out, \(consumers) consumer\(consumers == 1 ? "" : "s")", unit: "deliveries/s", pair, target: 0.80))
        }
        let endToEnd = await Harness.compare(sdk: { await likeToDelivery(likes: 4_000) }, baseline: { await actorCallToDelivery(calls: 4_000) })
        rows.append(Harness.row(
            "setLike → changes() delivery, 1 consumer (in memory)", unit: "changes/s", endToEnd, target: nil,
            note: String(format: "%.1f µs per change vs %.1f µs actor call + yield", 1e6 / endToEnd.sdk, 1e6 / endToEnd.baseline)
        ))
        return rows
    }

    /// Deliveries per second: each change is awaited until every consumer received it.
    private static func feed(consumers: Int, changes: Int) async -> Double {
        let feed = ChangeFeed(bufferSize: 1_024, logSize: 4_096)
        let deliveries = FanOutBenchmark.Deliveries()
        let tasks = (0..<consumers).map { _ in
            let stream = feed.subscribe(after: nil)
            return Task { for await _ in stream { deliveries.deliver() } }
        }
        let seconds = await Harness.time {
            for change in 1...changes {
                feed.publish(.refreshStarted(userID: "0"))
                await deliveries.wait(for: consumers * change)
            }
        }
        feed.finishAll()
        tasks.forEach { $0.cancel() }
        return Double(changes * consumers) / seconds
    }

    private static func raw(consumers: Int, changes: Int) async -> Double {
        let deliveries = FanOutBenchmark.Deliveries()
        var continuations: [AsyncStream<MomentsChange>.Continuation] = []
        var tasks: [Task<Void, Never>] = []
        for _ in 0..<consumers {
            let (stream, continuation) = AsyncStream<MomentsChange>.makeStream(bufferingPolicy: .bufferingOldest(1_024))
            continuations.append(continuation)
            tasks.append(Task { for await _ in stream { deliveries.deliver() } })
        }
        var sequence: UInt64 = 0
        let seconds = await Harness.time {
            for change in 1...changes {
                sequence += 1
                let value = MomentsChange(sequence: sequence, kind: .refreshStarted(userID: "0"))
                for continuation in continuations { continuation.yield(value) }
                await deliveries.wait(for: consumers * change)
            }
        }
        continuations.forEach { $0.finish() }
        tasks.forEach { $0.cancel() }
        return Double(changes * consumers) / seconds
    }

    /// Changes per second from `setLike` (an optimistic and a confirmed change) to
    /// their delivery at one consumer.
    private static func likeToDelivery(likes: Int) async -> Double {
        let store = MomentsStore(service: StoreBenchmark.InstantService(moments: 20), persistence: InMemoryPersistence())
        _ = try? await store.refresh(userID: "0")
        let deliveries = FanOutBenchmark.Deliveries()
        let first = store.lastChangeSequence
        let stream = store.changes()
        let consumer = Task { for await _ in stream { deliveries.deliver() } }
        var isLiked = store.lastChangeSequence == 0
        let seconds = await Harness.time {
            for _ in 1...likes {
                isLiked.toggle()
                _ = try? await store.setLike(isLiked, momentID: "m1", userID: "0")
                await deliveries.wait(for: Int(store.lastChangeSequence - first))
            }
        }
        consumer.cancel()
        return Double(store.lastChangeSequence - first) / seconds
    }

    actor BareActor {
        let continuation: AsyncStream<Int>.Continuation
        var value = 0
        init(_ continuation: AsyncStream<Int>.Continuation) { self.continuation = continuation }
        func change() {
            value += 1
            continuation.yield(value)
        }
    }

    private static func actorCallToDelivery(calls: Int) async -> Double {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        let actor = BareActor(continuation)
        let deliveries = FanOutBenchmark.Deliveries()
        let consumer = Task { for await _ in stream { deliveries.deliver() } }
        let seconds = await Harness.time {
            for call in 1...calls {
                await actor.change()
                await deliveries.wait(for: call)
            }
        }
        continuation.finish()
        consumer.cancel()
        return Double(calls) / seconds
    }
}
