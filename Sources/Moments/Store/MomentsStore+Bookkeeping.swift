import Foundation
import MomentsSupport
import MomentsObservability

/// Work in flight (refreshes, likes, settling, loads for subscribers), so that
/// ``MomentsStore/waitUntilIdle()`` can wait for none.
struct ActivityCount {
    var count = 0
    /// Waiters of ``MomentsStore/waitUntilIdle()``, resumed when the count falls to zero.
    var idleWaiters: [CheckedContinuation<Void, Never>] = []
}

/// The count of work in flight, and log records.
extension MomentsStore {
    func beginActivity() {
        activity.count += 1
    }

    func endActivity() {
        activity.count -= 1
        guard activity.count == 0 else { return }
        if !activity.idleWaiters.isEmpty {
            let waiters = activity.idleWaiters
            activity.idleWaiters = []
            for waiter in waiters { waiter.resume() }
        }
        if drainWait != nil { endDrainWait() }
    }

    func log(_ level: LogRecord.Level, _ message: String, userID: String, error: (any Error)?) {
        guard level >= configuration.logLevel, let handler = configuration.logHandler else { return }
        var metadata = ["userID": userID]
        if let error { metadata["error"] = String(describing: error) }
        handler(LogRecord(level: level, message: message, metadata: metadata))
    }
}
