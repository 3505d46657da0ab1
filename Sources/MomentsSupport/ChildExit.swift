import Foundation

/// How a child process ended.
package struct ChildExit: Sendable, Hashable {
    /// The exit status, or the signal's number when ``bySignal``.
    package let status: Int32
    /// Whether a signal ended the child.
    package let bySignal: Bool

    package init(status: Int32, bySignal: Bool) {
        self.status = status
        self.bySignal = bySignal
    }
}

extension Process {
    /// Waits until the child has exited, or `timeout` has passed (`nil`: no limit);
    /// returns how it ended, `nil` at the timeout.
    ///
    /// Foundation on Linux can miss a child's exit: the child stays a zombie, `isRunning`
    /// stays `true` and `waitUntilExit()` never returns (a test run hung with both of
    /// Swift's threads in it). This polls for the exit and reaps the child itself when
    /// Foundation did not. It blocks the calling thread: call it off Swift's cooperative
    /// threads, or for a child already told to end.
    package func waitForExit(timeout: Duration?) -> ChildExit? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            if !isRunning {
                return ChildExit(status: terminationStatus, bySignal: terminationReason == .uncaughtSignal)
            }
            var status: Int32 = 0
            let reaped = waitpid(processIdentifier, &status, WNOHANG)
            if reaped == processIdentifier {
                // WIFSIGNALED / WTERMSIG / WEXITSTATUS, spelled out (they are C macros).
                let signal = status & 0x7f
                return signal == 0 ? ChildExit(status: (status >> 8) & 0xff, bySignal: false) : ChildExit(status: signal, bySignal: true)
            }
            if reaped == -1, errno == ECHILD {
                // Reaped by Foundation between the two checks: it reports it next turn.
                // Reaped elsewhere, it never will: the status is then unknown.
                let patience = ContinuousClock.now + .seconds(1)
                while isRunning, ContinuousClock.now < patience { usleep(5_000) }
                if isRunning { return ChildExit(status: -1, bySignal: false) }
                continue
            }
            if let deadline, ContinuousClock.now >= deadline { return nil }
            usleep(5_000)
        }
    }
}
