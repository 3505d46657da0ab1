import MomentsObservability

/// Feeding the core its events, and performing the actions it returns.
extension MomentsStore {
    /// What performing a batch of actions left for the calling task to do (the actions
    /// that need it to wait, or to throw).
    struct Performed {
        /// The last batch enqueued for writing, for the caller to wait for.
        var ticket: PersistenceWriter.Ticket?
        /// Whether a persisted timeline must be read first.
        var needsLoad = false
        /// An answer the core refused, for the caller to throw.
        var refusal: (any Error)?
        /// Cached answers to drop.
        var invalidation: (momentID: String, liker: String)?
        /// Moments whose holders must be looked up in persistence.
        var unheld: [String] = []
        /// The refetch a settling asks for, if any.
        var refetch: (userID: String, joining: Bool)?
    }

    /// Feeds `event` to the core now; performs what it returns.
    @discardableResult
    func act(_ event: consuming StoreCore.Event) -> Performed {
        act(event, at: instant)
    }

    /// Feeds `event` to the core now, and performs what it returns, for an event whose
    /// actions leave the caller nothing to do (no load, write, refusal or refetch).
    func note(_ event: consuming StoreCore.Event, at now: StoreInstant) {
        let actions = core.handle(event, at: now)
        var performed = Performed()
        perform(actions, into: &performed)
        core.recycle(actions)
    }

    /// Feeds `event`, which happened at `now` (the clocks read as `reading`), to the
    /// core; performs what it returns.
    @discardableResult
    func act(_ event: consuming StoreCore.Event, at now: StoreInstant, reading: ClockReading? = nil) -> Performed {
        let actions = core.handle(event, at: now, reading: reading)
        var performed = Performed()
        perform(actions, into: &performed)
        core.recycle(actions)
        return performed
    }

    private func perform(_ actions: [StoreCore.Action], into performed: inout Performed) {
        for action in actions {
            switch action {
            case .emit(let kind):
                feed.publish(kind)
            case .deliverSnapshots(let users):
                publishSnapshots(to: users)
            case .persist:
                performed.ticket = writer.enqueue(core.takeBatch())
            case .load:
                performed.needsLoad = true
            case .send(let call):
                if let waiting = likeTurns.removeValue(forKey: call) { waiting.resume() } else { likeTurnsGiven.insert(call) }
            case .settle(let userID):
                beginActivity()
                Task {
                    await self.settle(userID)
                    self.endActivity()
                }
            case .refetch(let userID, let joining):
                performed.refetch = (userID, joining)
            case .findHolders(let momentIDs):
                performed.unheld += momentIDs
            case .invalidateCachedTimelines(let momentID, let liker):
                performed.invalidation = (momentID, liker)
            case .evicted(let count):
                instruments.evicted(count)
                instruments.timelinesInMemory(state.timelines.count)
            case .refuse(let error):
                performed.refusal = error
            case .log(let level, let message, let userID, let error):
                log(level, message, userID: userID, error: error)
            }
        }
    }

    /// Waits until the core sends like call `call` (its chain's calls before it ended).
    func waitForTurn(_ call: StoreCore.CallID) async {
        if likeTurnsGiven.remove(call) != nil { return }
        await withCheckedContinuation { likeTurns[call] = $0 }
    }

    /// A new number for a like call or a request.
    func nextNumber() -> Int {
        lastNumber += 1
        return lastNumber
    }

    /// Sends a new snapshot to the subscribers of each of `users`' timelines.
    func publishSnapshots(to users: Set<String>) {
        // Each user's subscribers are looked up alone: no list of users is built.
        for user in users {
            guard let mailboxes = snapshots.subscribers(of: user), let details = state.displayedTimeline(user) else { continue }
            for mailbox in mailboxes { mailbox.deliver(details) }
        }
    }

    /// Settles `userID`'s timeline with the server, as the core asks: refetches until it
    /// asks for none.
    private func settle(_ userID: String) async {
        while let (_, joining) = act(.settleNext(userID: userID)).refetch {
            if joining {
                _ = try? await refresh(userID: userID)
                continue
            }
            do {
                _ = try await refresh(userID: userID)
            } catch {
                act(.settleFailed(userID: userID))
                guard lifecycle.isRunning else { return }  // shutting down: nothing more is settled
                log(.warning, "the refetch to settle answers failed; the next refresh will", userID: userID, error: error)
                configuration.observer?(.refetchToSettleFailed(userID: userID))
                return
            }
        }
    }
}
