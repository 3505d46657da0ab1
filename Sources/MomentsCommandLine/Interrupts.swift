import Foundation
import Synchronization

/// Runs clean-up work when the process is interrupted (SIGINT, SIGTERM), then exits
/// with 130 or 143.
///
/// From ``installOnce()`` on, no signal is lost or ignored: a signal handler writes the
/// signal's number into a pipe (the only work it may do safely), and a thread of its
/// own reads the pipe, runs every registered clean-up, and exits. The handler also
/// records the signal at once, so a command failing because of the interruption (its
/// BFF stopped under it) exits with the interrupt's status, silently.
public enum Interrupts {
    private static let handlers = Mutex<[Int: @Sendable () -> Void]>([:])
    private static let counter = Mutex(0)
    private static let installed = Mutex(false)
    fileprivate static let received = Atomic<Int32>(0)

    /// Registers `cleanup`; returns a token to remove it with.
    static func onInterrupt(_ cleanup: @escaping @Sendable () -> Void) -> Int {
        installOnce()
        let id = counter.withLock { $0 += 1; return $0 }
        handlers.withLock { $0[id] = cleanup }
        return id
    }

    static func remove(_ id: Int) {
        _ = handlers.withLock { $0.removeValue(forKey: id) }
    }

    /// The signal that interrupted the process, if one did.
    static var signal: Int32? {
        let value = received.load(ordering: .acquiring)
        return value == 0 ? nil : value
    }

    /// The exit status for an interruption by `signal`.
    static func status(for signal: Int32) -> Int32 {
        signal == SIGINT ? 130 : 143
    }

    /// Starts catching SIGINT and SIGTERM. Call it first thing in `main`.
    public static func installOnce() {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return }
            _ = received.load(ordering: .relaxed)  // initialized before any handler runs
            interruptPipe = fds[1]
            let reader = fds[0]
            let thread = Thread {
                var byte: UInt8 = 0
                while read(reader, &byte, 1) != 1 {}
                let cleanups = handlers.withLock { Array($0.values) }
                for cleanup in cleanups { cleanup() }
                Foundation.exit(status(for: Int32(byte)))
            }
            thread.name = "moments.interrupts"
            thread.start()
            for signalNumber in [SIGINT, SIGTERM] {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = interruptHandler
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(signalNumber, &action, nil)
            }
        }
    }

    /// Ends the process with `status`, unless it was interrupted: then the clean-up
    /// thread ends it, with the interrupt's status, once clean-up is done.
    public static func exit(withStatus status: Int32) -> Never {
        if signal != nil {
            while true { pause() }
        }
        Foundation.exit(status)
    }
}

/// The write end of the interrupt pipe; set once before the handler is installed.
private nonisolated(unsafe) var interruptPipe: Int32 = -1

/// Async-signal-safe: an atomic store and a `write`.
private func interruptHandler(_ signalNumber: Int32) {
    _ = Interrupts.received.compareExchange(expected: 0, desired: signalNumber, ordering: .acquiringAndReleasing)
    var byte = UInt8(truncatingIfNeeded: signalNumber)
    _ = write(interruptPipe, &byte, 1)
}
