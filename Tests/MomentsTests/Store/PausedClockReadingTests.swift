import Foundation
@testable import Moments
import MomentsHTTP
import MomentsTestSupport
import MomentsTesting
import Testing

/// A store orders answers on its own clock and shares with other instances when the
/// server computed them on the wall clock, converting between the two with one reading
/// of both. The two clocks are read one after the other, and the reading thread may be
/// paused between them (for milliseconds on a busy machine): an interval converted as
/// if the pause had not happened is shifted by it, and storage then takes an older
/// value for a certainly newer one.
@Suite struct PausedClockReadingTests {
    /// A clock whose wall clock is read only after `pause` has passed on it, as when
    /// the reading thread is paused right after reading the instant.
    final class PausingClock: MomentsClock {
        let base: ManualClock
        let pause: Duration

        init(base: ManualClock, pause: Duration) {
            self.base = base
            self.pause = pause
        }

        var now: ContinuousClock.Instant { base.now }

        var date: Date {
            base.advance(by: pause)
            return base.date
        }

        func wake(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () -> Void) -> ClockWakeUp {
            base.wake(at: deadline, action)
        }
    }

    @Test func aConvertedIntervalHoldsTheTrueOneWhateverThePause() {
        let base = ManualClock()
        let truth = ManualClock()  // the same wall clock, read without pauses
        let clock = PausingClock(base: base, pause: .milliseconds(30))
        base.advance(by: .milliseconds(10))
        truth.advance(by: .milliseconds(10))
        let sent = StoreInstant(base.now) , received = StoreInstant(base.now + .milliseconds(2))
        let reading = ClockReading(clock)
        let trueSent = truth.date, trueReceived = truth.date.addingTimeInterval(0.002)
        #expect(reading.earliestDate(at: sent) <= trueSent)
        #expect(reading.latestDate(at: received) >= trueReceived)
        // Back to the store's clock: the range holds the instant too.
        #expect(reading.earliestInstant(at: trueSent) <= sent)
        #expect(reading.latestInstant(at: trueReceived) >= received)
        // Without a pause the conversion is exact (to the precision of a `Date`).
        let exact = ClockReading(truth)
        #expect(abs(exact.earliestDate(at: sent).timeIntervalSince(trueSent)) < 1e-5)
        #expect(abs(exact.latestDate(at: sent).timeIntervalSince(trueSent)) < 1e-5)
    }

    @Test func aLikeAnsweredWhileAnotherInstanceWasPausedReadingItsClockIsNotTakenForOlder() async throws {
        let server = SimulatedServer(timelines: ["u1": ["m1"]], likers: ["m1": []])
        let service = SimulatedService(server: server)
        let storage = SimulatedSharedStorage(instances: 2)
        let clockA = ManualClock(), clockB = ManualClock()
        let logs = [StoreEventLog(), StoreEventLog()]
        let clocks: [any MomentsClock] = [clockA, PausingClock(base: clockB, pause: .milliseconds(30))]
        let stores = (0..<2).map { index in
            MomentsStore(service: service, persistence: storage.view(index), configuration: .init {
                $0.changeBus = storage.view(index)
                $0.observer = logs[index].observer
                $0.clock = clocks[index]
                // The instances share one wall clock: only the pause can put them out of order.
                $0.clockSkewTolerance = .zero
            })
        }
        let (a, b) = (stores[0], stores[1])

        /// `store`'s like or unlike of m1 for u1, answered by the server `taking` on
        /// `clock` between its sending and its answer.
        func like(_ isLiked: Bool, by store: MomentsStore, on clock: ManualClock, taking duration: Duration) async throws {
            let call = Task { try await store.setLike(isLiked, momentID: "m1", userID: "u1") }
            let id = await service.waitForCalls(1)[0]
            await service.process(id)
            clock.advance(by: duration)
            await service.deliver(id)
            _ = try await call.value
        }
        // B's like is sent at 0 ms and answered at 1 ms; B's thread then pauses 30 ms
        // between reading its instant and its wall clock.
        try await like(true, by: b, on: clockB, taking: .milliseconds(1))
        // Meanwhile A's unlike of the same moment by the same user is sent (5 ms),
        // computed by the server after the like, and answered (10 ms).
        clockA.advance(by: .milliseconds(5))
        try await like(false, by: a, on: clockA, taking: .milliseconds(5))

        // Every announcement delivered and every refetch answered, time going on.
        clockA.advance(by: .seconds(1))
        clockB.advance(by: .seconds(1))
        var applied = [0, 0]
        var steps = 0
        while true {
            steps += 1
            // The instances settle in a few dozen steps; more is a refetch that never ends.
            guard steps < 100_000 else {
                Issue.record("the instances never settled: \(await a.diagnostics) | \(await b.diagnostics); calls \(await service.log.suffix(8))")
                break
            }
            if let target = await storage.instancesWithAnnouncements.first {
                await storage.deliverNext(to: target)
                applied[target] += 1
                await logs[target].waitUntilSharedEventsApplied(applied[target])
            } else if let call = await service.pending.unprocessed.first {
                await service.process(call)
                await service.deliver(call)
            } else if await !a.isIdle {
                await Task.yield()
            } else if await !b.isIdle {
                await Task.yield()
            } else {
                break
            }
        }

        let truth = await service.server.timeline("u1")
        #expect(truth.moments.first?.likes == [])
        #expect(await storage.load(userID: "u1") == truth)
        #expect(try await a.details(for: "u1") == truth)
        #expect(try await b.details(for: "u1") == truth)
    }
}
