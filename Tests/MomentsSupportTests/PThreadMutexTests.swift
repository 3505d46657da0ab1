import Foundation
import MomentsSupport
import Testing

@Suite struct PThreadMutexTests {
    private struct Refused: Error, Equatable {}

    /// Threads of their own (not Swift's cooperative pool) increment one counter at
    /// once: no increment is lost. The test waits for them without holding a thread of
    /// the pool (under coverage on a busy machine they took 26 s, and a blocked wait
    /// stalled every other test of the process that long).
    @Test func incrementsFromManyThreadsAreAllKept() async {
        let counter = PThreadMutex(0)
        let threads = 8
        let increments = 20_000
        let done = DispatchGroup()
        for _ in 0..<threads {
            done.enter()
            Thread {
                for _ in 0..<increments { counter.withLock { $0 += 1 } }
                done.leave()
            }.start()
        }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            done.notify(queue: .global()) { finished.resume() }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    /// A body that throws leaves the value as it changed it, rethrows its own error
    /// type, and releases the mutex (the next `withLock` does not block).
    @Test func aThrowingBodyRethrowsAndReleasesTheLock() {
        let value = PThreadMutex([1])
        #expect(throws: Refused.self) {
            try value.withLock { (list: inout [Int]) throws(Refused) in
                list.append(2)
                throw Refused()
            }
        }
        #expect(value.withLock { $0 } == [1, 2])
    }

    /// Copies of the struct share one value.
    @Test func copiesShareTheValue() {
        let first = PThreadMutex("a")
        let second = first
        second.withLock { $0 += "b" }
        #expect(first.withLock { $0 } == "ab")
    }
}
