import Foundation
public import Testing

/// Runs each test of a suite (or one test) on a thread of its own instead of Swift's
/// cooperative pool, one such test at a time.
///
/// A test that computes for seconds without suspending (a simulation, a fuzzer), or
/// blocks in `fsync`, holds one of the pool's threads all that time: on a 2-core
/// machine, two such tests stall every other test of the process, and tests waiting
/// for an event then wait for them. Under this trait the test's work, and its child
/// tasks', run on its thread, which the operating system shares fairly with the rest;
/// and only one such test runs at a time, so however many there are, the pool keeps
/// most of the machine. `MOMENTS_HEAVY_TESTS_AT_ONCE=N` lets N run at once, for a run
/// of heavy tests alone (`Scripts/simulate.sh`).
///
/// ```swift
/// @Suite(.ownThread) struct SimulationTests { … }
/// ```
public struct OwnThreadTrait: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite || testCase != nil else { return try await function() }
        await HeavyTestTurn.shared.take()
        defer { HeavyTestTurn.shared.give() }
        let executor = ThreadTaskExecutor(name: "test \(test.name)")
        defer { executor.shutDown() }
        try await withTaskExecutorPreference(executor) { try await function() }
    }
}

extension Trait where Self == OwnThreadTrait {
    /// Each test runs on a thread of its own (see ``OwnThreadTrait``).
    public static var ownThread: Self { OwnThreadTrait() }
}

/// The turns heavy tests take in order: one at a time, or as many as
/// `MOMENTS_HEAVY_TESTS_AT_ONCE` says.
final class HeavyTestTurn: @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `busy` and `waiting` are reached only under `lock`.
    static let shared = HeavyTestTurn(
        turns: ProcessInfo.processInfo.environment["MOMENTS_HEAVY_TESTS_AT_ONCE"].flatMap(Int.init).map { max(1, $0) } ?? 1
    )
    private let lock = NSLock()
    private let turns: Int
    /// Turns taken.
    private var busy = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(turns: Int) {
        self.turns = turns
    }

    func take() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = lock.withLock { () -> Bool in
                if busy < turns {
                    busy += 1
                    return true
                }
                waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func give() {
        let next = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if waiting.isEmpty {
                busy -= 1
                return nil
            }
            return waiting.removeFirst()  // the turn passes to it
        }
        next?.resume()
    }
}

/// A task executor running every job on one thread of its own, until shut down.
final class ThreadTaskExecutor: TaskExecutor, @unchecked Sendable {
    // Safety of `@unchecked Sendable`: `jobs` and `isShutDown` are reached only under
    // `condition`'s lock; the thread is started once, in `init`.
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var isShutDown = false

    init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = String(name.prefix(15))
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func shutDown() {
        condition.lock()
        isShutDown = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !isShutDown { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let batch = jobs
            jobs.removeAll()
            condition.unlock()
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
        }
    }
}
