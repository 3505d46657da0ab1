public import Foundation
package import MomentsSupport

/// Waiting on child processes without blocking Swift's cooperative threads: on a
/// 2-core machine two tests blocked in `waitUntilExit()` would starve every other test.
extension Process {
    /// The exit status (or the signal's number), once the process has ended; waits on
    /// a thread of its own, and copes with a Foundation that misses the exit
    /// (``ChildExit``).
    public func exitStatus() async -> Int32 {
        await exit().status
    }

    /// How the process ended, once it has; waits on a thread of its own.
    package func exit() async -> ChildExit {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: self.waitForExit(timeout: nil) ?? ChildExit(status: -1, bySignal: false))
            }.start()
        }
    }
}

extension Process {
    /// Starts the process with its output and errors captured, and returns, once it has
    /// ended, its status and both texts; everything is waited for off Swift's threads.
    /// With `startingAsAShellDoes`, the child starts with no signal blocked
    /// (``runWithNoSignalBlocked()``), not with the calling thread's mask.
    public func runCapturingOutput(startingAsAShellDoes: Bool = false) async throws -> (status: Int32, out: String, err: String) {
        let out = Pipe(), err = Pipe()
        standardOutput = out
        standardError = err
        if startingAsAShellDoes { try await runWithNoSignalBlocked() } else { try run() }
        async let output = out.fileHandleForReading.readToEndOffPool()
        async let errors = err.fileHandleForReading.readToEndOffPool()
        let status = await exitStatus()
        return (status, String(decoding: await output, as: UTF8.self), String(decoding: await errors, as: UTF8.self))
    }
}

extension FileHandle {
    /// Everything until end of file; reads on a thread of its own.
    public func readToEndOffPool() async -> Data {
        await withCheckedContinuation { continuation in
            Thread {
                continuation.resume(returning: self.readDataToEndOfFile())
            }.start()
        }
    }
}

extension Process {
    /// Keeps the child's coverage profile out of `swift test --enable-code-coverage`'s
    /// merge: a child that is killed, interrupted or starved of disk space leaves a torn
    /// profile, which would make that merge fail. Under `Scripts/coverage.sh`
    /// (`MOMENTS_CHILD_PROFILE_DIR` set) the child writes its own file there, which the
    /// script merges leaving torn ones out; otherwise it writes none.
    public func discardingCoverageProfile() {
        var environment = self.environment ?? ProcessInfo.processInfo.environment
        if let directory = ProcessInfo.processInfo.environment["MOMENTS_CHILD_PROFILE_DIR"], !directory.isEmpty {
            environment["LLVM_PROFILE_FILE"] = directory + "/child-%p.profraw"
        } else {
            environment["LLVM_PROFILE_FILE"] = "/dev/null"
        }
        self.environment = environment
    }
}
