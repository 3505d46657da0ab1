import Foundation
@testable import MomentsCommandLine
import MomentsTestSupport
import Testing

/// The demo's BFF child is a process signals reach. Started with the signal mask of one
/// of Swift's threads, it had SIGTERM and SIGINT blocked: `terminate()` did not end it,
/// and only closing its input did.
@Suite struct ReferenceBFFProcessTests {
    @Test(.timeLimit(.minutes(1))) func theBFFChildEndsOnSIGTERMAlone() async throws {
        let bff = try await ReferenceBFFProcess.start()
        defer { bff.stop() }
        let pid = bff.processIdentifier
        let interrupts: UInt64 = 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)
        #expect(Self.field("SigBlk", of: pid).map { $0 & interrupts } == 0, "SIGINT and SIGTERM are not blocked in the child")

        // Its input stays open: only the signal can end it. The wait is for its exit;
        // should it never come, the time limit cancels the test, which kills the child.
        kill(pid, SIGTERM)
        await Self.waitForExit(of: pid)
        #expect(!Self.isAlive(pid), "the child ended on SIGTERM")
    }

    /// Waits, on a thread of its own, until the child `pid` has exited, without reaping
    /// it (Foundation does); cancelled, kills it.
    private static func waitForExit(of pid: Int32) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                Thread {
                    var info = siginfo_t()
                    // Returns at the exit, or at once if Foundation has reaped the child.
                    while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) != 0, errno == EINTR {}
                    continuation.resume()
                }.start()
            }
        } onCancel: {
            kill(pid, SIGKILL)
        }
    }

    /// A hexadecimal field of `/proc/PID/status`.
    private static func field(_ name: String, of pid: Int32) -> UInt64? {
        ProcessResources.status(name, of: String(pid)).flatMap { UInt64($0, radix: 16) }
    }

    /// Running, or stopped: neither gone nor a zombie waiting to be reaped.
    private static func isAlive(_ pid: Int32) -> Bool {
        guard let state = ProcessResources.status("State", of: String(pid)) else { return false }
        return !state.contains("Z") && !state.contains("X")
    }
}
