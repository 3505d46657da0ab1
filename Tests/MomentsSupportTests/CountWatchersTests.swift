import MomentsSupport
import MomentsTestSupport
import Testing

/// A counter that resumes its watchers as ``CountWatchers`` asks its owners to (taken
/// under its lock, resumed outside it), and remembers every count it has had.
private final class WatchedCounter: Sendable {
    private struct State {
        var count = 0
        var history: Set<Int> = [0]
        var watchers = CountWatchers()
        /// Calls of ``wait(until:)`` that have registered (or found their count).
        var arrivals = 0
    }

    private let state = PThreadMutex(State())

    var count: Int { state.withLock { $0.count } }

    /// Whether the count has ever been `count`.
    func hasBeen(_ count: Int) -> Bool { state.withLock { $0.history.contains(count) } }

    func add(_ delta: Int) {
        let reached = state.withLock { state in
            state.count += delta
            state.history.insert(state.count)
            return state.watchers.take(reaching: state.count)
        }
        for watcher in reached { watcher.resume() }
    }

    func wait(until count: Int) async {
        await CountWatchers.wait { watcher in
            state.withLock { state in
                state.arrivals += 1
                return state.watchers.register(watcher, for: count, now: state.count)
            }
        }
    }

    /// Returns once `count` calls of ``wait(until:)`` have registered, letting their
    /// tasks run meanwhile.
    func waitForArrivals(_ count: Int) async {
        while state.withLock({ $0.arrivals }) < count { await Task.yield() }
    }
}

@Suite struct CountWatchersTests {
    @Test func aWatcherReturnsWhenItsCountIsReachedAndNotBefore() async {
        let counter = WatchedCounter()
        counter.add(3)
        #expect(await withFailsafe { await counter.wait(until: 3) }, "the count is 3 already")

        let returned = PThreadMutex<[Int]>([])
        let five = Task { await counter.wait(until: 5); returned.withLock { $0.append(5) } }
        let six = Task { await counter.wait(until: 6); returned.withLock { $0.append(6) } }
        await counter.waitForArrivals(3)
        counter.add(2)
        #expect(await withFailsafe { await five.value })
        // The count has never been 6: nothing can have resumed that watcher.
        #expect(returned.withLock { $0 } == [5])
        counter.add(1)
        #expect(await withFailsafe { await six.value })
        #expect(returned.withLock { $0 } == [5, 6])
    }

    /// Seeded walks of a count up and down by one, with watchers of random counts added
    /// at random steps: each returns, and only once the count has been its own.
    @Test(arguments: [1, 2, 3, 4, 5] as [UInt64])
    func everyWatcherReturnsOnceItsCountIsReached(seed: UInt64) async {
        var generator = SeededGenerator(seed: seed)
        let counter = WatchedCounter()
        var waits: [(count: Int, task: Task<Bool, Never>)] = []
        for _ in 0..<300 {
            if Int.random(in: 0..<4, using: &generator) == 0 {
                let count = Int.random(in: 0...6, using: &generator)
                waits.append((count, Task {
                    await counter.wait(until: count)
                    return counter.hasBeen(count)
                }))
                // Registered before the count moves on.
                await counter.waitForArrivals(waits.count)
            }
            counter.add(counter.count == 0 || Bool.random(using: &generator) ? 1 : -1)
        }
        // Up by seven and down to zero: every count a watcher waits for is reached again.
        for _ in 0..<7 { counter.add(1) }
        while counter.count > 0 { counter.add(-1) }
        for wait in waits {
            let returnedInTime = PThreadMutex(false)
            let task = wait.task
            let came = await withFailsafe(.seconds(60)) {
                let value = await task.value
                returnedInTime.withLock { $0 = value }
            }
            #expect(came, "seed \(seed): a watcher of \(wait.count) never returned")
            #expect(!came || returnedInTime.withLock { $0 }, "seed \(seed): a watcher of \(wait.count) returned before the count was \(wait.count)")
        }
    }
}
