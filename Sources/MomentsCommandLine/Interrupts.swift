import Foundation
import Synchronization

/// What the process does when it is interrupted (SIGINT, SIGTERM).
///
/// From ``installOnce()`` on, no signal is lost or ignored: a signal handler writes the
/// signal's number into a pipe (the only work it may do safely), and a thread of its
/// own reads the pipe. The handler also records the signal at once.
///
/// - A command that stops gracefully (``stopGracefully(_:)``: `watch`, `demo`) is asked
///   to stop; it shuts its store and client down and returns, and the process exits
///   with the command's own status. If it has not returned within ``gracefulDeadline``,
///   the clean-ups run and the process exits with 130 or 143.
/// - Otherwise every registered clean-up runs and the process exits with 130 (SIGINT)
///   or 143 (SIGTERM); a command failing because of the interruption (its BFF stopped
///   under it) exits with that status, silently.
public enum Interrupts {
    private static let handlers = Mutex<[Int: @Sendable () -> Void]>([:])
    private static let stoppers = Mutex<[Int: @Sendable () -> Void]>([:])
    private static let counter = Mutex(0)
    private static let installed = Mutex(false)
    fileprivate static let received = Atomic<Int32>(0)
    /// Whether the interrupt was handed to a graceful stop.
    private static let stoppingGracefully = Atomic<Bool>(false)
    /// Whether the command stops gracefully, though it may not have registered its stop
    /// yet: an interrupt before it does is handed to it when it does.
    private static let expectsGracefulStop = Atomic<Bool>(false)

    /// How long a command stopping gracefully has before the process exits anyway: a
    /// guard against a stop that hangs, not the time a stop takes (well under a second
    /// on an idle machine, but a demo interrupted while it starts its BFF beside two
    /// compilers took more than 3 s).
    static let gracefulDeadline: Duration = .seconds(10)

    /// Registers `stop`, which must make the running command return soon (it cancels
    /// the command's task); while one is registered, an interrupt stops the command
    /// gracefully instead of exiting. Returns a token to remove it with.
    static func stopGracefully(_ stop: @escaping @Sendable () -> Void) -> Int {
        installOnce()
        let id = counter.withLock { $0 += 1; return $0 }
        let alreadyInterrupted = stoppers.withLock { stoppers -> Bool in
            stoppers[id] = stop
            return stoppingGracefully.load(ordering: .acquiring)
        }
        if alreadyInterrupted { stop() }
        return id
    }

    static func removeStop(_ id: Int) {
        _ = stoppers.withLock { $0.removeValue(forKey: id) }
    }

    /// Whether an interrupt was handed to a graceful stop: the command ends with its
    /// own status.
    static var isStoppingGracefully: Bool { stoppingGracefully.load(ordering: .acquiring) }

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

    /// Starts catching SIGINT and SIGTERM. Call it first thing in `main`, saying whether
    /// the command line's command stops gracefully
    /// (``MomentsCommandLine/stopsGracefully(_:)``): then an interrupt that comes before
    /// the command is ready to stop is handed to it once it is.
    ///
    /// - Parameter releasingStartupBlock: Unblocks, in the calling thread, the
    ///   interrupts the executable blocked while it started (before any library's
    ///   initialiser ran, so that an interrupt then waits instead of ending the
    ///   process). It is called once the handlers are installed, on the calling thread
    ///   and on the thread that reads the interrupts: an interrupt that came meanwhile
    ///   is handled then.
    public static func installOnce(stoppingGracefully: Bool, releasingStartupBlock: @escaping @Sendable () -> Void = {}) {
        if stoppingGracefully { expectsGracefulStop.store(true, ordering: .releasing) }
        installOnce(releasingStartupBlock: releasingStartupBlock)
    }

    /// Starts catching SIGINT and SIGTERM.
    public static func installOnce() {
        installOnce(releasingStartupBlock: {})
    }

    private static func installOnce(releasingStartupBlock: @escaping @Sendable () -> Void) {
        installed.withLock { installed in
            guard !installed else { return }
            installed = true
            var fds: [Int32] = [0, 0]
            guard pipe(&fds) == 0 else { return }
            _ = received.load(ordering: .relaxed)  // initialized before any handler runs
            interruptPipe = fds[1]
            let reader = fds[0]
            let thread = Thread {
                releasingStartupBlock()
                var byte: UInt8 = 0
                while read(reader, &byte, 1) != 1 {}
                let graceful = stoppers.withLock { stoppers -> [@Sendable () -> Void]? in
                    guard !stoppers.isEmpty || expectsGracefulStop.load(ordering: .acquiring) else { return nil }
                    stoppingGracefully.store(true, ordering: .releasing)
                    return Array(stoppers.values)
                }
                if let graceful {
                    for stop in graceful { stop() }
                    // The command returns and the process exits; if not in time, it is ended.
                    let deadline = gracefulDeadline.components
                    var pause = timespec(tv_sec: Int(deadline.seconds), tv_nsec: Int(deadline.attoseconds / 1_000_000_000))
                    var left = timespec()
                    while nanosleep(&pause, &left) != 0 { pause = left }
                }
                let cleanups = handlers.withLock { Array($0.values) }
                for cleanup in cleanups { cleanup() }
                Foundation.exit(status(for: Int32(byte)))
            }
            // The handler first: a signal that comes while the thread starts waits in the pipe.
            for signalNumber in [SIGINT, SIGTERM] {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = interruptHandler
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(signalNumber, &action, nil)
            }
            // Handled from now on: one that came while the process started arrives now.
            releasingStartupBlock()
            thread.name = "moments.interrupts"
            thread.start()
        }
    }

    /// Ends the process with `status`, unless it was interrupted and not stopped
    /// gracefully: then the clean-up thread ends it, with the interrupt's status, once
    /// clean-up is done.
    public static func exit(withStatus status: Int32) -> Never {
        if signal != nil, !isStoppingGracefully {
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
