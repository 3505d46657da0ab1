import Foundation
import Moments

/// The store's own cost per operation: `refresh` and `setLike` through `MomentsStore`
/// with a service that answers at once and in-memory persistence, beside a minimal
/// hand-rolled actor store doing the same steps (service call, persistence write,
/// dictionary update, `yield`) in the same run.
enum StoreBenchmark {
    /// Answers at once: refreshes alternate between two timelines that differ in one
    /// moment's likes; likes answer with the moment liked or not.
    actor InstantService: MomentsService {
        let plain: MomentsDetails
        let liked: MomentsDetails
        var refreshes = 0

        init(moments: Int) {
            plain = BenchmarkData.timeline(moments: moments)
            var liked = plain
            liked.moments[1].likes = (liked.moments[1].likes ?? []) + [Moment.LikedUser(id: "0", avatar: "https://images.example.com/avatars/0.jpg")]
            liked.moments[1].isLiked = true
            self.liked = liked
        }

        func getMoments(userID: String) -> MomentsDetails {
            refreshes += 1
            return refreshes % 2 == 0 ? plain : liked
        }

        func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
            isLiked ? liked : plain
        }
    }

    /// The baseline: the fewest steps a store can take for the same work.
    actor HandRolledStore {
        actor Persistence {
            var timelines: [String: MomentsDetails] = [:]
            func save(_ details: MomentsDetails, for userID: String) { timelines[userID] = details }
        }

        let service: InstantService
        let persistence = Persistence()
        var timelines: [String: MomentsDetails] = [:]
        let continuation: AsyncStream<MomentsDetails>.Continuation

        init(service: InstantService, continuation: AsyncStream<MomentsDetails>.Continuation) {
            self.service = service
            self.continuation = continuation
        }

        func refresh(_ userID: String) async {
            let details = await service.getMoments(userID: userID)
            await persistence.save(details, for: userID)
            timelines[userID] = details
            continuation.yield(details)
        }

        func setLike(_ isLiked: Bool, momentID: String, userID: String) async {
            if var optimistic = timelines[userID], let index = optimistic.moments.firstIndex(where: { $0.id == momentID }) {
                optimistic.moments[index].isLiked = isLiked
                continuation.yield(optimistic)
            }
            let details = await service.updateLike(isLiked, momentID: momentID, fromUserID: userID)
            await persistence.save(details, for: userID)
            timelines[userID] = details
            continuation.yield(details)
        }
    }

    static func run() async -> [Row] {
        var rows: [Row] = []
        let refresh = await Harness.compare(
            sdk: {
                let store = MomentsStore(service: InstantService(moments: 20), persistence: InMemoryPersistence())
                let consumer = Task { for await _ in await store.updates(for: "0") {} }
                defer { consumer.cancel() }
                return await Harness.rate(for: Harness.roundDuration) { _ = try? await store.refresh(userID: "0"); return 1 }
            },
            baseline: {
                let (stream, continuation) = AsyncStream<MomentsDetails>.makeStream(bufferingPolicy: .bufferingNewest(1))
                let store = HandRolledStore(service: InstantService(moments: 20), continuation: continuation)
                let consumer = Task { for await _ in stream {} }
                defer { consumer.cancel() }
                return await Harness.rate(for: Harness.roundDuration) { await store.refresh("0"); return 1 }
            }
        )
        rows.append(Harness.row("store refresh, 20 moments (instant service, in memory)", unit: "refreshes/s", refresh, target: 0.30,
                                note: String(format: "%.1f µs vs %.1f µs hand-rolled", 1e6 / refresh.sdk, 1e6 / refresh.baseline)))
        let like = await Harness.compare(
            sdk: {
                let store = MomentsStore(service: InstantService(moments: 20), persistence: InMemoryPersistence())
                _ = try? await store.refresh(userID: "0")
                let consumer = Task { for await _ in await store.updates(for: "0") {} }
                defer { consumer.cancel() }
                var isLiked = false
                return await Harness.rate(for: Harness.roundDuration) {
                    isLiked.toggle()
                    _ = try? await store.setLike(isLiked, momentID: "m1", userID: "0")
                    return 1
                }
            },
            baseline: {
                let (stream, continuation) = AsyncStream<MomentsDetails>.makeStream(bufferingPolicy: .bufferingNewest(1))
                let store = HandRolledStore(service: InstantService(moments: 20), continuation: continuation)
                await store.refresh("0")
                let consumer = Task { for await _ in stream {} }
                defer { consumer.cancel() }
                var isLiked = false
                return await Harness.rate(for: Harness.roundDuration) {
                    isLiked.toggle()
                    await store.setLike(isLiked, momentID: "m1", userID: "0")
                    return 1
                }
            }
        )
        rows.append(Harness.row("store setLike, 20 moments (instant service, in memory)", unit: "likes/s", like, target: 0.30,
                                note: String(format: "%.1f µs vs %.1f µs hand-rolled", 1e6 / like.sdk, 1e6 / like.baseline)))
        return rows
    }

    /// Refreshes, then likes, through the store alone for `seconds` each (with one
    /// subscriber), for a profiler to watch; reports the rates. `SUBSCRIBERS=0` runs
    /// them without a subscriber, `SUBSCRIBERS=idle` with one that never takes its value
    /// (what delivering costs, without waking anyone); `PHASE=refresh` stops after the
    /// refreshes.
    static func profile(seconds: Int) async -> [Row] {
        let store = MomentsStore(service: InstantService(moments: 20), persistence: InMemoryPersistence())
        let mode = ProcessInfo.processInfo.environment["SUBSCRIBERS"]
        let consumer = Task { if mode != "0", mode != "idle" { for await _ in await store.updates(for: "0") {} } }
        defer { consumer.cancel() }
        let idle = mode == "idle" ? await store.updates(for: "0") : nil
        defer { withExtendedLifetime(idle) {} }
        if let count = ProcessInfo.processInfo.environment["STORE_OPS"].flatMap(Int.init) {
            // A fixed number of refreshes, then of likes, for counters read from outside
            // (`perf stat -e task-clock`): `PHASE=refresh` or `PHASE=like` runs one alone.
            let phase = ProcessInfo.processInfo.environment["PHASE"]
            // `STORE=hand-rolled`: the baseline's steps alone, for the same counters.
            let isHandRolled = ProcessInfo.processInfo.environment["STORE"] == "hand-rolled"
            let (stream, continuation) = AsyncStream<MomentsDetails>.makeStream(bufferingPolicy: .bufferingNewest(1))
            let handRolled = HandRolledStore(service: InstantService(moments: 20), continuation: continuation)
            let handConsumer = Task { if isHandRolled, mode != "0", mode != "idle" { for await _ in stream {} } }
            defer { handConsumer.cancel() }
            func refresh() async {
                if isHandRolled { await handRolled.refresh("0") } else { _ = try? await store.refresh(userID: "0") }
            }
            func like(_ isLiked: Bool) async {
                if isHandRolled {
                    await handRolled.setLike(isLiked, momentID: "m1", userID: "0")
                } else {
                    _ = try? await store.setLike(isLiked, momentID: "m1", userID: "0")
                }
            }
            if phase != "like" { for _ in 0..<count { await refresh() } }
            if phase != "refresh" {
                if phase == "like" { await refresh() }
                for index in 0..<count { await like(index % 2 == 0) }
            }
            return [Row(name: "\(isHandRolled ? "hand-rolled " : "")store profile: \(count) operations of each kind", unit: "operations", sdk: Double(count))]
        }
        let (refreshes, refreshSwitches) = await ContextSwitches.rate(for: .seconds(seconds)) { _ = try? await store.refresh(userID: "0") }
        if ProcessInfo.processInfo.environment["PHASE"] == "refresh" {
            return [Harness.row("store profile: refresh", unit: "per second", (refreshes, refreshes, 1), target: nil,
                                note: String(format: "%.2f µs, %.2f context switches", 1e6 / refreshes, refreshSwitches))]
        }
        var isLiked = false
        let (likes, likeSwitches) = await ContextSwitches.rate(for: .seconds(seconds)) {
            isLiked.toggle()
            _ = try? await store.setLike(isLiked, momentID: "m1", userID: "0")
        }
        let (stream, continuation) = AsyncStream<MomentsDetails>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let handRolled = HandRolledStore(service: InstantService(moments: 20), continuation: continuation)
        let handConsumer = Task { if mode != "0", mode != "idle" { for await _ in stream {} } }
        defer { handConsumer.cancel() }
        let (handRefreshes, handSwitches) = await ContextSwitches.rate(for: .seconds(2)) { await handRolled.refresh("0") }
        return [Harness.row("store profile: hand-rolled refresh", unit: "per second", (handRefreshes, handRefreshes, 1), target: nil,
                            note: String(format: "%.2f µs, %.2f context switches", 1e6 / handRefreshes, handSwitches)),
                Harness.row("store profile: refresh vs setLike", unit: "per second", (refreshes, likes, refreshes / likes), target: nil,
                            note: String(format: "refresh %.1f µs, %.2f switches; setLike %.1f µs, %.2f switches",
                                         1e6 / refreshes, refreshSwitches, 1e6 / likes, likeSwitches))]
    }
}
