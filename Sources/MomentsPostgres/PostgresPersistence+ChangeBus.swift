public import Moments

extension PostgresPersistence: MomentsChangeBus {
    /// What other instances commit to the database, read through a connection of its
    /// own that `LISTEN`s on ``Configuration-swift.struct/channel``; this instance's
    /// own saves are left out.
    public func sharedChanges() -> AsyncStream<SharedChangeEvent> {
        listener.subscribe()
    }

    /// What the database holds now for `momentIDs` and the timelines of `userIDs` (see `MomentsChangeBus`).
    public func committedState(momentIDs: [String], userIDs: [String]) async throws -> SharedCommit {
        try await run(userID: nil) { connection in
            try PostgresRows.committedState(momentIDs: momentIDs, userIDs: userIDs, on: connection)
        }
    }
}
