import Foundation

extension Process {
    /// Starts the process as a shell would: with no signal blocked.
    ///
    /// `run()` starts the child with the calling thread's signal mask, and Swift's
    /// cooperative threads block nearly every signal: a child started from one inherits
    /// SIGINT and SIGTERM blocked, so `terminate()` and an interrupt wait, pending, until
    /// the child unblocks them, which most programs never do. Here `run()` is called on
    /// a thread of its own whose mask is empty.
    package func runWithNoSignalBlocked() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                var none = sigset_t()
                sigemptyset(&none)
                pthread_sigmask(SIG_SETMASK, &none, nil)
                continuation.resume(with: Result { try self.run() })
            }
            thread.name = "moments.process-start"
            thread.start()
        }
    }
}
