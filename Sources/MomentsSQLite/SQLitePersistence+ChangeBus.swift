import Foundation
public import Moments
import MomentsSupport

/// Several processes on one file, each told of the others' commits: the persistence is
/// also a ``MomentsChangeBus`` (give it as the store's `changeBus`).
///
/// Every save and removal appends what it changed to the file's change log in its own
/// transaction. The bus looks every `changePollInterval` whether another connection
/// committed (`PRAGMA data_version`, one read) and, if one did, delivers the commits it
/// has not seen, oldest first, each read from the rows as they are then. It skips this
/// instance's own commits, except the moments the storage found contested, which every
/// instance asks the server for again, the writer too. A connection that fell behind
/// the log's retained commits, or could not read it, is told events were lost
/// (``SharedChangeEvent/interrupted``) and resynchronises.
extension SQLitePersistence: MomentsChangeBus {
    /// The commits of other connections to the file from now on (every commit after
    /// the last this connection knew of when the call returned), until the stream is
    /// dropped or the persistence closed. The stream does not keep the persistence
    /// alive: once released, the stream ends.
    public nonisolated func sharedChanges() -> AsyncStream<SharedChangeEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: SharedChangeEvent.self)
        let interval = changePollInterval
        let start = Watch(seen: knownChangeSequence.withLock { $0 })
        let poller = Task { [weak self] in
            var watch = start
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    break
                }
                guard let self, let events = await self.look(&watch) else { break }
                for event in events { continuation.yield(event) }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in poller.cancel() }
        return stream
    }

    /// What the file holds now for `momentIDs` and the timelines of `userIDs` (those it
    /// has), each row with when the server computed it.
    public func committedState(momentIDs: [String], userIDs: [String]) throws -> SharedCommit {
        try run(userID: nil) {
            try connection.transaction(writing: false) { try readCommittedState(momentIDs: momentIDs, userIDs: userIDs) }
        }
    }

    private func readCommittedState(momentIDs: [String], userIDs: [String]) throws -> SharedCommit {
        var commit = SharedCommit()
        var ids = Set(momentIDs)
        for userID in userIDs.sorted() {
            guard let details = try readTimeline(userID) else { continue }
            ids.formUnion(details.moments.map(\.id))
            let age = try storedTimelineAge(of: userID)
            commit.timelines.append(CommittedTimeline(userID: userID, details: details, confirmedWithin: age?.interval))
        }
        for id in ids.sorted() {
            if let moment = try storedMoment(id) { commit.moments.append(moment) }
        }
        return commit
    }

    /// Where one change stream stands in the log.
    struct Watch: Sendable {
        var seen: Int64
        var dataVersion: Int64 = -1
        var failing = false
    }

    /// One look: the events of the commits other connections made since the last;
    /// `nil` once the persistence is closed.
    private func look(_ watch: inout Watch) -> [SharedChangeEvent]? {
        guard !connection.isClosed else { return nil }
        do {
            let version = try run(userID: nil) { try connection.integer("PRAGMA data_version") }
            // Another connection's commit changes the version; this one's own contested
            // commits are looked for without it.
            guard version != watch.dataVersion || watch.failing || hasOwnContest else { return [] }
            hasOwnContest = false
            watch.dataVersion = version
            var seen = watch.seen
            var found = try run(userID: nil) { try connection.transaction(writing: false) { try events(after: &seen) } }
            watch.seen = seen
            knownChangeSequence.withLock { $0 = max($0, seen) }
            if watch.failing { found.insert(.interrupted, at: 0) }
            watch.failing = false
            return found
        } catch {
            // Nothing was consumed: the next look reads the same commits, after telling
            // the store it may have missed some meanwhile.
            watch.failing = true
            return []
        }
    }

    /// The events for the commits after `seen`, which it advances.
    private func events(after seen: inout Int64) throws -> [SharedChangeEvent] {
        let changes = try changes(after: seen)
        guard let last = changes.last else { return [] }
        var events: [SharedChangeEvent] = []
        // Commits pruned before they were read: lost.
        if let first = changes.first, first.sequence > seen + 1 { events.append(.interrupted) }
        for change in changes {
            let isMine = change.writer == writerID
            let momentIDs = isMine ? change.contestedMomentIDs : change.momentIDs
            let userIDs = isMine ? change.contestedUserIDs : change.userIDs
            var commit = try readCommittedState(momentIDs: momentIDs, userIDs: userIDs)
            let contested = Set(change.contestedMomentIDs)
            for index in commit.moments.indices where contested.contains(commit.moments[index].moment.id) {
                commit.moments[index].isContested = true
            }
            let contestedUsers = Set(change.contestedUserIDs)
            for index in commit.timelines.indices where contestedUsers.contains(commit.timelines[index].userID) {
                commit.timelines[index].isContested = true
            }
            if !isMine {
                commit.removedUserIDs = change.removedUserIDs
                commit.removedEverything = change.removedEverything
            }
            if !commit.moments.isEmpty || !commit.timelines.isEmpty || !commit.removedUserIDs.isEmpty || commit.removedEverything {
                events.append(.committed(commit))
            }
        }
        seen = last.sequence
        return events
    }

    /// A moment's row as committed, announced with an interval covering its content and
    /// the likes' answers it keeps.
    private func storedMoment(_ id: String) throws -> CommittedMoment? {
        let statement = try connection.statement("""
            SELECT \(SQLiteRows.momentColumns), confirmed_not_before, confirmed_not_after, like_confirmations FROM moment WHERE id = ?
            """)
        defer { statement.reset() }
        statement.bind(id, at: 1)
        guard try statement.step() else { return nil }
        let damaged = { (reason: String) in
            PersistenceError(code: .corruptedData, location: self.path, reason: "moment \(id.debugDescription) has \(reason)")
        }
        let moment = try SQLiteRows.readMoment(statement, from: 0, damaged: damaged)
        let content = ConfirmationInterval(microsecondsNotBefore: statement.optionalInt(at: 11), notAfter: statement.optionalInt(at: 12))
        let kept = statement.isNull(at: 13) ? [] : try likeConfirmations(statement, at: 13, damaged: damaged)
        return CommittedMoment(moment: moment, confirmedWithin: LikeConfirmation.interval(ofContent: content, keeping: kept))
    }
}
