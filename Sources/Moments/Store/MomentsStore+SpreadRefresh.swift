import Foundation
import MomentsSupport
import MomentsHTTP

/// Refreshing many timelines at once without sending the BFF a burst: after an outage,
/// a service that refreshes every user it holds should not have all of them reach the
/// BFF in the same instant (every instance of a fleet doing the same).
extension MomentsStore {
    /// Refreshes each of `userIDs`, each starting at its own random moment within
    /// `window` ("full jitter": uniformly from now to `window` later), at most
    /// `maximumConcurrent` at a time.
    ///
    /// Every refresh follows the rules of ``refresh(userID:source:)``; one failing
    /// does not stop the others. Cancelling the calling task cancels those not finished.
    ///
    /// For example, once the BFF answers again after an outage:
    /// ```swift
    /// let failed = await store.refresh(userIDs: heldUsers, spreadOver: .seconds(30))
    /// ```
    ///
    /// - Returns: The error of each user whose refresh failed; empty when all succeeded.
    public nonisolated func refresh(
        userIDs: [String], spreadOver window: Duration, maximumConcurrent: Int = 8, source: TimelineSource = .server
    ) async -> [String: any Error] {
        var generator = SystemRandomNumberGenerator()
        return await refresh(userIDs: userIDs, spreadOver: window, maximumConcurrent: maximumConcurrent, source: source, using: &generator)
    }

    /// ``refresh(userIDs:spreadOver:maximumConcurrent:source:)`` with the start
    /// offsets drawn from `generator` (seeded in tests).
    nonisolated func refresh(
        userIDs: [String], spreadOver window: Duration, maximumConcurrent: Int, source: TimelineSource,
        using generator: inout some RandomNumberGenerator
    ) async -> [String: any Error] {
        let clock = configuration.clock
        let started = clock.now
        let plan = Self.spreadStarts(of: userIDs, over: window, using: &generator)
        return await withTaskGroup(of: (String, (any Error)?).self) { group in
            var failures: [String: any Error] = [:]
            var next = plan.startIndex
            func startNext(_ group: inout TaskGroup<(String, (any Error)?)>) {
                guard next < plan.endIndex else { return }
                let (userID, offset) = plan[next]
                next += 1
                group.addTask {
                    do {
                        try await clock.sleep(until: started + offset)
                        _ = try await self.refresh(userID: userID, source: source)
                        return (userID, nil)
                    } catch {
                        return (userID, error)
                    }
                }
            }
            for _ in 0..<max(1, maximumConcurrent) { startNext(&group) }
            for await (userID, error) in group {
                if let error { failures[userID] = error }
                startNext(&group)
            }
            return failures
        }
    }

    /// Each user with a start offset drawn uniformly from `[0, window)`, earliest first.
    static func spreadStarts(
        of userIDs: [String], over window: Duration, using generator: inout some RandomNumberGenerator
    ) -> [(userID: String, offset: Duration)] {
        let nanoseconds = max(0, Int64(window.seconds * 1e9))
        return userIDs
            .map { ($0, Duration.nanoseconds(nanoseconds > 0 ? Int64.random(in: 0..<nanoseconds, using: &generator) : 0)) }
            .sorted { $0.1 < $1.1 }
    }
}
