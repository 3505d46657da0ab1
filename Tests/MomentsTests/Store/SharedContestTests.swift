import Moments
import MomentsTestSupport
import Testing

/// Two instances sharing storage and a change bus (``SimulatedSharedStorage``), driven
/// step by step: the shared storage must come to the server's value of a moment whose
/// save was contested, even when no instance holds that moment in memory any more.
@Suite struct SharedContestTests {
    private struct Instances {
        let server = SimulatedServer(timelines: ["u0": ["m0"], "u1": ["m1"]], likers: [:])
        let service: SimulatedService
        let storage = SimulatedSharedStorage(instances: 2)
        let stores: [MomentsStore]
        let logs = [StoreEventLog(), StoreEventLog()]

        init() {
            let service = SimulatedService(server: server)
            let storage = self.storage
            self.service = service
            // One timeline in memory each: a refresh of another user evicts the last.
            let logs = self.logs
            stores = (0..<2).map { index in
                MomentsStore(service: service, persistence: storage.view(index), configuration: .init {
                    $0.changeBus = storage.view(index)
                    $0.observer = logs[index].observer
                    $0.maximumTimelinesInMemory = 1
                })
            }
        }

        /// The one call not in `known`, once it has arrived.
        func nextCall(besides known: Set<Int> = []) async -> Int {
            let calls = await service.waitForCalls(known.count + 1)
            return calls.first { !known.contains($0) } ?? calls[0]
        }

        /// Has the server process and answer the next call, and waits for `operation`.
        func answer<T: Sendable>(besides known: Set<Int> = [], _ operation: Task<T, any Error>) async throws -> T {
            let call = await nextCall(besides: known)
            await service.process(call)
            await service.deliver(call)
            return try await operation.value
        }

        /// Delivers every announcement, each applied before the next, and answers each
        /// refetch it starts, until nothing is left anywhere.
        func deliverEverything() async {
            var applied = [0, 0]
            while let target = await storage.instancesWithAnnouncements.first {
                await storage.deliverNext(to: target)
                applied[target] += 1
                await logs[target].waitUntilSharedEventsApplied(applied[target])
                while await !stores[target].isIdle {
                    if await !service.isEmpty {
                        let call = await nextCall()
                        await service.process(call)
                        await service.deliver(call)
                    }
                    await stores[target].waitUntilIdleOrCalling(service)
                }
            }
        }
    }

    @Test func aContestedSaveIsSettledByItsWriterAfterEveryTimelineHoldingTheMomentWasEvicted() async throws {
        let instances = Instances()
        let (a, b) = (instances.stores[0], instances.stores[1])

        // B asks for u0's timeline; the server computes it before A's like below.
        let bRefresh = Task { try await b.refresh(userID: "u0") }
        let bCall = await instances.nextCall()
        await instances.service.process(bCall)
        // A reads u0's timeline and likes m0: both answered and saved.
        _ = try await instances.answer(besides: [bCall], Task { try await a.refresh(userID: "u0") })
        _ = try await instances.answer(besides: [bCall], Task { try await a.setLike(true, momentID: "m0", userID: "u0") })
        await a.waitUntilIdle()
        // B's answer, sent before A's calls and received after them, arrives last: its
        // save replaces A's value of m0, and the storage cannot tell which came first;
        // but the row keeps the answer to A's like, which B's value cannot undo.
        await instances.service.deliver(bCall)
        _ = try await bRefresh.value
        await b.waitUntilIdle()
        #expect(await instances.storage.load(userID: "u0")?.moments.first?.likes?.map(\.id) == ["u0"])

        // Both instances turn to another user before the contest reaches B.
        _ = try await instances.answer(Task { try await a.refresh(userID: "u1") })
        _ = try await instances.answer(Task { try await b.refresh(userID: "u1") })
        await a.waitUntilIdle()
        await b.waitUntilIdle()
        #expect(await a.timelinesInMemory == 1)
        #expect(await b.timelinesInMemory == 1)

        await instances.deliverEverything()

        let truth = await instances.service.server.timeline("u0")
        #expect(truth.moments.first?.likes?.map(\.id) == ["u0"])
        #expect(await instances.storage.load(userID: "u0") == truth)
    }
}

extension MomentsStore {
    /// Waits until the store is idle, or until it has a call waiting at `service`.
    fileprivate func waitUntilIdleOrCalling(_ service: SimulatedService) async {
        while !isIdle {
            if await !service.isEmpty { return }
            await Task.yield()
        }
    }
}
