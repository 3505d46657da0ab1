import Foundation

/// Runs `body` on a thread of its own and returns what it returns, so that blocking
/// work (opening, migrating and checking a file, waiting for its lock) never holds one
/// of Swift's cooperative threads: on a 2-core machine there are two.
///
/// The thread ends with `body`. For work done once (opening a store), not per call:
/// per-call work goes to a `ThreadExecutor`.
package func runOffThePool<T: Sendable>(named name: String, _ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.name = name
        thread.start()
    }
}
