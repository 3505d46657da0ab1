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
    public func runCapturingOutput() async throws -> (status: Int32, out: String, err: String) {
        let out = Pipe(), err = Pipe()
        standardOutput = out
        standardError = err
        try run()
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

extension Process {
    /// Waits until the started process has run its own first code: until its main
    /// thread blocks SIGINT and SIGTERM (the `moments` executable does, from its
    /// `.preinit_array`) or catches them, or it has ended. Before that the dynamic loader
    /// is still mapping its libraries, and no code of the process can handle a signal.
    /// Reads `/proc`; elsewhere it returns at once.
    public func waitUntilItsCodeRuns() async {
        #if os(Linux)
        let status = "/proc/\(processIdentifier)/status"
        let interrupts: UInt64 = 1 << (UInt64(SIGINT) - 1) | 1 << (UInt64(SIGTERM) - 1)
        func mask(_ field: String, in text: String) -> UInt64 {
            guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }) else { return 0 }
            return UInt64(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces), radix: 16) ?? 0
        }
        while isRunning, let text = try? String(contentsOfFile: status, encoding: .utf8) {
            if mask("SigBlk", in: text) & interrupts == interrupts || mask("SigCgt", in: text) & interrupts == interrupts { return }
            try? await Task.sleep(for: .microseconds(200))
        }
        #endif
    }
}
