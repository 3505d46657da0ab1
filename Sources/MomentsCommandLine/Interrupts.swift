import Dispatch
import Foundation
import Synchronization

/// Runs clean-up work when the process is interrupted (SIGINT, SIGTERM), then exits
/// with 130 or 143.
enum Interrupts {
    private static let handlers = Mutex<[Int: @Sendable () -> Void]>([:])
    private static let sources = Mutex<[any DispatchSourceSignal]>([])
    private static let counter = Mutex(0)

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

    /// Starts watching for SIGINT and SIGTERM. Call it at start-up: watching begins a
    /// moment after this returns (the dispatch source registers asynchronously), and a
    /// signal arriving before then is ignored.
    static func installOnce() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler {
                    let cleanups = handlers.withLock { Array($0.values) }
                    for cleanup in cleanups { cleanup() }
                    exit(signalNumber == SIGINT ? 130 : 143)
                }
                source.resume()
                sources.append(source)
            }
        }
    }
}
