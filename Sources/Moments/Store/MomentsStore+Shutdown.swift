import MomentsObservability
import MomentsSupport
import MomentsHTTP

/// Where a store is in its life: taking calls, draining them, or shut down.
enum StoreLifecycle {
    /// Taking calls.
    case running
    /// ``MomentsStore/shutdown(gracePeriod:)`` has begun: no new call is taken; the
    /// shutdown callers wait here until it ends.
    case draining(waiters: [CheckedContinuation<Void, Never>])
    /// Shut down: streams ended, persistence closed.
    case shutDown

    var isRunning: Bool {
        if case .running = self { return true }
        return false
    }
}

/// Stopping: a service receiving SIGTERM stops taking calls, lets the calls in flight
/// and the writes finish, ends its subscribers' streams with the last state, closes its
/// storage, and exits.
extension MomentsStore {
    /// Shuts the store down gracefully; returns once it is shut down.
    ///
    /// From the moment it is called:
    /// 1. every new call (`refresh`, `setLike`, `details`) throws
    ///    ``MomentsStoreError/Code-swift.struct/shutDown``, and a new ``updates(for:)``
    ///    stream gives the timeline in memory, if any, and ends;
    /// 2. the store stops listening to its change bus;
    /// 3. calls in flight are let finish, for at most `gracePeriod` on the configured
    ///    ``Configuration-swift.struct/clock``. A call still in flight then is not waited
    ///    for: whatever its answer, it persists and streams nothing and throws
    ///    ``MomentsStoreError/Code-swift.struct/shutDown`` (shut its `HTTPClient` down,
    ///    or cancel it, to end it sooner);
    /// 4. every persistence write already queued finishes (each one is all or nothing),
    ///    a batch whose write failed is tried once more (a failure is logged), and
    ///    nothing more is written;
    /// 5. every ``updates(for:)`` stream ends after delivering its last value, and every
    ///    ``changes()`` stream after the changes buffered for it;
    /// 6. the persistence is closed (``MomentsPersistence/close()``).
    ///
    /// When it returns, the store holds no task, thread, connection or file. It is
    /// idempotent and safe from any task: a second call waits for the first to end.
    ///
    /// - Parameter gracePeriod: How long calls in flight may take to finish. The default
    ///   is 10 seconds, within the 30 seconds most orchestrators allow after SIGTERM.
    public func shutdown(gracePeriod: Duration = .seconds(10)) async {
        switch lifecycle {
        case .shutDown:
            return
        case .draining(let waiters):
            await withCheckedContinuation { lifecycle = .draining(waiters: waiters + [$0]) }
            return
        case .running:
            lifecycle = .draining(waiters: [])
        }
        endRunWaiters()
        busConsumer.withLock { $0?.cancel() }
        if activity.count > 0 {
            // Woken by the last call's end (``endActivity()``) or by the grace period's end.
            let wakeUp = configuration.clock.wake(at: configuration.clock.now + gracePeriod) { [weak self] in
                Task { await self?.endDrainWait() }
            }
            await withCheckedContinuation { drainWait = $0 }
            wakeUp.cancel()
        }
        // What memory holds and a failed write left out reaches the disk if it now can.
        do {
            try await writer.catchUp()
        } catch {
            log(.error, "shutting down with a batch that could not be persisted", userID: "", error: error)
        }
        writer.close()
        await writer.idle()
        snapshots.finishAll(keepingLast: true)
        feed.finishAll()
        await persistence.close()
        guard case .draining(let waiters) = lifecycle else { return }
        lifecycle = .shutDown
        for waiter in waiters { waiter.resume() }
    }

    /// Runs until the calling task is cancelled or ``shutdown(gracePeriod:)`` is called,
    /// then shuts the store down gracefully (when cancelled, with the default grace
    /// period) and returns.
    ///
    /// The shape of swift-service-lifecycle's `Service`, so a store is a service with one
    /// line (`extension MomentsStore: Service {}`); see <doc:RunningAsAService>.
    public func run() async throws {
        if lifecycle.isRunning {
            await withTaskCancellationHandler {
                await withCheckedContinuation { continuation in
                    if lifecycle.isRunning && !Task.isCancelled {
                        runWaiters.append(continuation)
                    } else {
                        continuation.resume()
                    }
                }
            } onCancel: {
                Task { await self.endRunWaiters() }
            }
        }
        await shutdown()
    }

    /// Throws ``MomentsStoreError/Code-swift.struct/shutDown`` unless the store takes calls.
    func checkRunning(_ userID: String) throws {
        guard lifecycle.isRunning else { throw MomentsStoreError(code: .shutDown, userID: userID, momentID: "") }
    }

    /// Ends the wait for calls in flight (all ended, or the grace period is over).
    func endDrainWait() {
        drainWait?.resume()
        drainWait = nil
    }

    /// Ends every ``run()``: the task running it was cancelled, or a shutdown began.
    func endRunWaiters() {
        let waiters = runWaiters
        runWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
