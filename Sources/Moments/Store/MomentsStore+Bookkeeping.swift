import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsObservability

/// Eviction, the count of work in flight, and debug and log records.
extension MomentsStore {
    /// Evicts least recently used timelines, sparing `current` (the one just used) and
    /// every timeline with subscribers, likes or refreshes in flight.
    func evictIfNeeded(sparing current: String) {
        let evicted = state.evictIfNeeded { userID in
            userID == current || snapshots.hasSubscribers(userID) || likeBook.inFlightPerUser[userID] != nil || refreshBook.inFlight[userID] != nil
        }
        if instruments.isMeasuring {
            instruments.evicted(evicted.count)
            instruments.timelinesInMemory(state.timelines.count)
        }
        if !evicted.isEmpty { state.sweepRetired(oldestRequest: refreshBook.requestStarts.values.min()) }
    }

    func beginActivity() {
        activity.count += 1
    }

    func beginRequest(at start: StoreInstant) -> Int {
        refreshBook.requestCount += 1
        refreshBook.requestStarts[refreshBook.requestCount] = start
        return refreshBook.requestCount
    }

    func endRequest(_ id: Int) {
        refreshBook.requestStarts[id] = nil
        if state.retiredCount > 0 { state.sweepRetired(oldestRequest: refreshBook.requestStarts.values.min()) }
    }

    func endActivity() {
        activity.count -= 1
        guard activity.count == 0 else { return }
        let waiters = activity.idleWaiters
        activity.idleWaiters = []
        for waiter in waiters { waiter.resume() }
        endDrainWait()
    }

    /// A debug record of an ordering decision, built only if a log handler is set and
    /// ``Configuration-swift.struct/logLevel`` lets debug records through.
    func debug(_ message: @autoclosure () -> String, userID: String) {
        guard configuration.logLevel <= .debug, let handler = configuration.logHandler else { return }
        handler(LogRecord(level: .debug, message: message(), metadata: ["userID": userID]))
    }

    /// `*` if `userID`'s timeline holds `momentID` as liked, for debug records.
    func shownIsLiked(_ momentID: String, of userID: String) -> String {
        state.displayedTimeline(userID)?.moment(withID: momentID)?.isLiked == true ? "*" : ""
    }

    /// `momentID`'s confirmed likers, for debug records.
    func confirmedLikers(_ momentID: String) -> String {
        guard let likes = state.records[momentID]?.value.likes else { return "\(momentID)[?]" }
        return "\(momentID)[\(likes.map(\.id).joined(separator: ","))]"
    }

    func log(_ level: LogRecord.Level, _ message: String, userID: String, error: (any Error)?) {
        guard level >= configuration.logLevel, let handler = configuration.logHandler else { return }
        var metadata = ["userID": userID]
        if let error { metadata["error"] = String(describing: error) }
        handler(LogRecord(level: level, message: message, metadata: metadata))
    }
}
