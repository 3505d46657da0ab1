import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import MomentsObservability

/// One seeded schedule of several instances of a service: two or three stores, one
/// server, and storage they share (``SimulatedSharedStorage``) with a change bus whose
/// announcements arrive late, in any interleaving with the server's answers, or are
/// lost to an interruption. Each store refreshes and likes at random; the server
/// processes requests in a random order and delays, reorders and fails answers.
///
/// What must hold: once everything has been delivered, every store, and the shared
/// storage, agrees with the server (after a final refresh of each user by one instance
/// if an answer was lost), and no store's confirmed value of a like register ever went
/// back.
struct SharedStoreSimulation {
    let seed: UInt64
    /// What the server's `isLiked` means.
    var model: SimulatedServer.IsLikedModel = .perViewer
    var steps = 60
    /// `MOMENTS_SIMULATION_TRACE=1` prints each step to standard error once the
    /// schedule has ended (writing as it runs would change its timing);
    /// `MOMENTS_SIMULATION_TRACE=failures` prints only the steps of schedules that fail.
    /// (The stores run on real threads: a failure that depends on how their work
    /// interleaves may not come back when its seed is replayed, so its trace is kept.)
    private let tracing = ProcessInfo.processInfo.environment["MOMENTS_SIMULATION_TRACE"] != nil
    private let tracingFailuresOnly = ProcessInfo.processInfo.environment["MOMENTS_SIMULATION_TRACE"] == "failures"
    private let traced = Locked<[String]>([])

    init(seed: UInt64, model: SimulatedServer.IsLikedModel = .perViewer) {
        self.seed = seed
        self.model = model
    }

    private func trace(_ text: @autoclosure () -> String) {
        if tracing {
            let line = text()
            traced.update { $0.append(line) }
        }
    }

    private func printTrace(failed: Bool) {
        guard tracing, failed || !tracingFailuresOnly else { return }
        FileHandle.standardError.write(Data(traced.value.map { "[shared \(seed)] \($0)\n" }.joined().utf8))
    }

    /// ``run(reportingTo:)``, reporting a schedule that does not end within `deadline`
    /// as a failure instead of hanging.
    func runWithDeadline(_ deadline: Duration) async -> [String] {
        await runSchedule(deadline: deadline) { progress in await run(reportingTo: progress) }
    }

    private struct Instances {
        let stores: [MomentsStore]
        let logs: [StoreEventLog]
        let storage: SimulatedSharedStorage
        let service: SimulatedService
    }

    func run(reportingTo progress: Locked<String?> = Locked(nil)) async -> [String] {
        var generator = SeededGenerator(seed: seed)
        let server = SimulatedServer(users: 5, moments: 4, model: model, using: &generator)
        let service = SimulatedService(server: server)
        let count = Int.random(in: 2...3, using: &generator)
        let storage = SimulatedSharedStorage(instances: count)
        // Without tolerance, more shared values are certainly older or newer than the
        // store's: the ordering rule's other branches are taken.
        let tolerance: Duration = Bool.random(using: &generator) ? .zero : .milliseconds(100)
        let capacity = Int.random(in: 2...5, using: &generator)
        // Wall clocks that disagree by up to the tolerance, as machines' clocks do (drawn
        // apart, so a seed's schedule is the same with and without them).
        var skews = SeededGenerator(seed: seed ^ 0x5EED_C10C)
        let halfTolerance = Int64(tolerance.components.seconds * 1_000_000 + tolerance.components.attoseconds / 1_000_000_000_000) / 2
        let clocks = (0..<count).map { _ in SkewedClock(skew: .microseconds(Int64.random(in: -halfTolerance...halfTolerance, using: &skews))) }
        let logs = (0..<count).map { _ in StoreEventLog() }
        let stores = (0..<count).map { index in
            MomentsStore(service: service, persistence: storage.view(index), configuration: .init {
                $0.changeBus = storage.view(index)
                $0.observer = logs[index].observer
                $0.clockSkewTolerance = tolerance
                $0.clock = clocks[index]
                $0.maximumTimelinesInMemory = capacity
                if tracing {
                    $0.logLevel = .debug
                    $0.logHandler = { [traced] record in
                        traced.update { $0.append("  instance \(index) \(record.level): \(record.message) \(record.metadata["userID"].map { "(user \($0))" } ?? "")") }
                    }
                }
            })
        }
        let instances = Instances(stores: stores, logs: logs, storage: storage, service: service)
        trace("\(count) instances, tolerance \(tolerance), wall clocks skewed by \(clocks.map(\.skew)), capacity \(capacity)")
        var subscribers: [Int: [String: StreamProbe<MomentsDetails>]] = [:]
        var operations: [Task<Void, Never>] = []
        let users = server.userIDs
        var samples: [[[String: Moment]]] = Array(repeating: [], count: count)
        // Every like call's instance, register and span (on one counter): a register its
        // user changed from two instances at once is the server's to order.
        let ticks = Locked(0)
        let likeSpans = Locked<[(instance: Int, register: SimulatedServer.LikeRegister, start: Int, end: Int)]>([])

        for _ in 0..<steps {
            let pending = await service.pending
            let store = Int.random(in: 0..<count, using: &generator)
            let user = users.randomElement(using: &generator) ?? "u0"
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<14:
                trace("instance \(store) refreshes \(user)")
                operations.append(Task { _ = try? await stores[store].refresh(userID: user) })
            case 14..<36:
                let moment = (server.timelines[user] ?? ["m0"]).randomElement(using: &generator) ?? "m0"
                let isLiked = Bool.random(using: &generator)
                trace("instance \(store): \(user) \(isLiked ? "likes" : "unlikes") \(moment)")
                operations.append(Task {
                    var start = 0
                    ticks.update { $0 += 1; start = $0 }
                    _ = try? await stores[store].setLike(isLiked, momentID: moment, userID: user)
                    ticks.update { tick in
                        tick += 1
                        let span = (store, SimulatedServer.LikeRegister(momentID: moment, userID: user), start, tick)
                        likeSpans.update { $0.append(span) }
                    }
                })
            case 36..<39:
                operations.randomElement(using: &generator)?.cancel()
            case 39..<43:
                if let probe = subscribers[store]?.removeValue(forKey: user) {
                    probe.cancel()
                } else {
                    subscribers[store, default: [:]][user] = StreamProbe(await stores[store].updates(for: user))
                }
            case 43..<60:
                if let id = pending.unprocessed.randomElement(using: &generator) { await service.process(id) }
            case 60..<77:
                if let id = pending.answered.randomElement(using: &generator) { await service.deliver(id) }
            case 77..<81:
                if let id = (pending.unprocessed + pending.answered).randomElement(using: &generator) { await service.fail(id) }
            case 81..<98:
                if let target = await storage.instancesWithAnnouncements.randomElement(using: &generator) {
                    trace("announcement delivered to instance \(target)")
                    await storage.deliverNext(to: target)
                }
            default:
                trace("instance \(store)'s change feed is interrupted")
                await storage.interrupt(store)
            }
            await settle(instances)
            for (index, store) in stores.enumerated() { samples[index].append(await store.confirmedMoments) }
            if tracing {
                let calls = await service.log.suffix(6).joined(separator: "; ")
                trace("  calls: \(calls)")
                for line in await storage.log.suffix(3) { trace("  storage: \(line)") }
                for (index, sample) in samples.enumerated() {
                    let likes = sample.last?.sorted { $0.key < $1.key }.map { "\($0.key)[\(($0.value.likes ?? []).map(\.id).joined(separator: ","))]" }
                    trace("  instance \(index) confirms \(likes?.joined(separator: " ") ?? "")")
                }
            }
        }

        let finished = Locked(0)
        let started = operations.count
        operations = operations.map { operation in Task { await operation.value; finished.update { $0 += 1 } } }
        await quiesce(instances, using: &generator, progress: progress) { finished.value == started }
        for operation in operations { await operation.value }
        var failures: [String] = []

        // Without lost answers (or failed refetches, which leave the settling to the next
        // refresh), no final refresh is needed: every instance already agrees
        // (on `isLiked` too where it is the viewer's own; a global `isLiked` another
        // user's like changed is known only once the viewer asks again).
        var unsettled = 0
        for log in logs { unsettled += log.unsettledRefetches }
        if await service.lostAnswers == 0, unsettled == 0 {
            failures += await disagreements(instances, users: users, when: "before the final refresh", ignoringIsLiked: model == .global)
        }
        // One instance refreshes each user; an instance whose settling refetch failed
        // left its timelines to its own next refresh, so then every instance does.
        for user in users {
            let chosen = stores.randomElement(using: &generator) ?? stores[0]
            for store in unsettled == 0 ? [chosen] : stores {
                let done = Locked(false)
                let refresh = Task {
                    defer { done.update { $0 = true } }
                    return try await store.refresh(userID: user)
                }
                trace("final refresh of \(user)")
                await quiesce(instances, using: &generator, progress: progress) { done.value }
                if case .failure(let error) = await refresh.result { failures.append("the final refresh of \(user) failed: \(error)") }
            }
        }
        failures += await disagreements(instances, users: users, when: "after the final refreshes")
        for (index, subscribed) in subscribers {
            for (user, probe) in subscribed {
                let truth = await service.server.timeline(user)
                if let last = await probe.waitUntil(timeout: .seconds(5), { $0 == truth }), last != truth {
                    failures.append("instance \(index), user \(user): the last snapshot \(summary(last)) ≠ server \(summary(truth))")
                }
                probe.cancel()
            }
        }

        let finalServer = await service.server
        let spans = likeSpans.value
        let raced = Set(spans.flatMap { call in
            spans.contains { other in
                other.instance != call.instance && other.register == call.register && other.start < call.end && call.start < other.end
            } ? [call.register] : []
        })
        for (index, storeSamples) in samples.enumerated() {
            var sampled: [SimulatedServer.LikeRegister: [Bool]] = [:]
            for sample in storeSamples {
                for (id, moment) in sample {
                    for user in users {
                        sampled[SimulatedServer.LikeRegister(momentID: id, userID: user), default: []]
                            .append(moment.likes?.contains { $0.id == user } ?? false)
                    }
                }
            }
            // A register its user changed from two instances at once is the server's to order.
            for (register, values) in sampled where !raced.contains(register) && !finalServer.isMonotone(values, momentID: register.momentID, userID: register.userID) {
                failures.append("instance \(index): register \(register.momentID)/\(register.userID) went back in confirmed state: sampled \(values), history \(finalServer.history[register] ?? [])")
            }
        }
        if tracing, !failures.isEmpty {
            // The whole history of calls and of the storage, quiescence included.
            for line in await service.log { trace("  call \(line)") }
            for line in await storage.log { trace("  storage \(line)") }
        }
        printTrace(failed: !failures.isEmpty)
        return failures
    }

    /// Where a store, or the shared storage, differs from the server.
    private func disagreements(_ instances: Instances, users: [String], when: String, ignoringIsLiked: Bool = false) async -> [String] {
        var failures: [String] = []
        let comparable: (MomentsDetails) -> MomentsDetails = ignoringIsLiked ? \.withoutIsLiked : { $0 }
        for user in users {
            let truth = comparable(await instances.service.server.timeline(user))
            if let stored = await instances.storage.load(userID: user).map(comparable), stored != truth {
                failures.append("\(when), user \(user): shared storage \(summary(stored)) ≠ server \(summary(truth))")
            }
            for (index, store) in instances.stores.enumerated() {
                let held: MomentsDetails?
                do {
                    held = try await store.details(for: user).map(comparable)
                } catch {
                    failures.append("\(when), instance \(index), user \(user): cannot read: \(error)")
                    continue
                }
                if let held, held != truth {
                    let diagnostics = await store.diagnostics
                    failures.append("\(when), instance \(index), user \(user): store \(summary(held)) ≠ server \(summary(truth)) [\(diagnostics)]")
                }
            }
        }
        return failures
    }

    /// Lets the stores react to the last step (see `yieldUntilStable`).
    private func settle(_ instances: Instances) async {
        await yieldUntilStable { await signature(instances) }
    }

    private func signature(_ instances: Instances) async -> [Int] {
        let pending = await instances.service.pending
        var signature = [await instances.service.callsReceived, await instances.storage.operations]
        for log in instances.logs { signature.append(log.sharedEventsApplied) }
        return signature + pending.unprocessed + [-1] + pending.answered
    }

    private func allIdle(_ instances: Instances) async -> Bool {
        for store in instances.stores where await !store.isIdle { return false }
        return true
    }

    /// Whether every instance has applied every event delivered to it.
    private func eventsApplied(_ instances: Instances) async -> Bool {
        let delivered = await instances.storage.delivered
        for (index, log) in instances.logs.enumerated() where log.sharedEventsApplied != delivered[index] {
            return false
        }
        return true
    }

    /// Answers every call and delivers every announcement, in a random order, until
    /// `isDone` holds and nothing is waiting or in flight anywhere.
    private func quiesce(
        _ instances: Instances, using generator: inout SeededGenerator, progress: Locked<String?>,
        until isDone: @Sendable () -> Bool = { true }
    ) async {
        let service = instances.service
        let storage = instances.storage
        while true {
            let pending = await service.pending
            let announced = await storage.instancesWithAnnouncements
            if pending.unprocessed.isEmpty, pending.answered.isEmpty, announced.isEmpty, isDone() {
                // Done once every store is idle and has applied every event delivered to
                // it (an applied event may start a refetch: then the loop goes on).
                if await eventsApplied(instances), await allIdle(instances) { return }
                var diagnostics: [String] = []
                for store in instances.stores { diagnostics.append(await store.diagnostics) }
                progress.update { $0 = "waiting until the stores are idle: \(diagnostics.joined(separator: " | "))" }
                await settle(instances)
                continue
            }
            progress.update { $0 = "pending calls \(pending), announcements for \(announced)" }
            for id in pending.unprocessed.shuffled(using: &generator) { await service.process(id) }
            for id in (pending.unprocessed + pending.answered).shuffled(using: &generator) { await service.deliver(id) }
            for instance in announced.shuffled(using: &generator) { await storage.deliverNext(to: instance) }
            await settle(instances)
        }
    }

    private func summary(_ details: MomentsDetails) -> String {
        summarize(details)
    }
}
