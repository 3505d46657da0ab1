import Dispatch
import Foundation

/// A serial executor that runs every job on one thread of its own.
///
/// Blocking work (SQLite calls and their busy waits, `fsync`, file reads and writes)
/// must never run on Swift's cooperative pool, where one wait stalls a share of every
/// task in the process. An actor that owns such a resource declares
/// `nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }`,
/// so its methods, and only they, run on this thread (GRDB's one owner per handle).
///
/// The thread lives until ``shutDown()``: the owner calls it from its `deinit`. Jobs
/// already queued still run before the thread ends.
package final class ThreadExecutor: SerialExecutor {
    private struct Queue {
        var jobs = Ring<UnownedJob>()
        var isShutDown = false
    }

    private let queue = PThreadMutex(Queue())
    private let wakeUp = DispatchSemaphore(value: 0)
    /// The threads of every executor alive, for ``isRunningOnAnExecutorThread``.
    private static let threads = PThreadMutex<[pthread_t]>([])

    /// Starts the thread, named `name` (visible in debuggers and `top -H`).
    package init(name: String) {
        let thread = Thread { [self] in runLoop() }
        thread.name = name
        thread.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        queue.withLock { $0.jobs.append(unowned) }
        wakeUp.signal()
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Lets the thread end once the jobs already queued have run.
    package func shutDown() {
        queue.withLock { $0.isShutDown = true }
        wakeUp.signal()
    }

    /// Whether the caller runs on a thread of some `ThreadExecutor` (for tests of the
    /// rule that blocking work never runs on Swift's cooperative threads).
    /// `Thread.current` cannot tell: its name is not the thread's on Linux.
    package static var isRunningOnAnExecutorThread: Bool {
        let current = pthread_self()
        return threads.withLock { $0.contains { pthread_equal($0, current) != 0 } }
    }

    private func runLoop() {
        let current = pthread_self()
        Self.threads.withLock { $0.append(current) }
        defer { Self.threads.withLock { threads in threads.removeAll { pthread_equal($0, current) != 0 } } }
        while true {
            wakeUp.wait()
            let (job, isShutDown) = queue.withLock { ($0.jobs.popFirst(), $0.isShutDown) }
            if let job {
                job.runSynchronously(on: asUnownedSerialExecutor())
            } else if isShutDown {
                return
            }
        }
    }
}
