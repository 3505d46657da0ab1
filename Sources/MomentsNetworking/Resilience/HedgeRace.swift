import MomentsSupport
import MomentsHTTP

/// The events of one hedged attempt, in the order they happen: each attempt's outcome
/// and the hedging delay's end, handed to the call that waits for them.
///
/// The call waits here rather than on a task group's next child, so the hedging delay
/// needs no task of its own (it is an entry on the client's ``DeadlineTimer``), and an
/// attempt that ends before the call looks finds its outcome waiting, with no
/// suspension and no thread woken.
final class HedgeRace: Sendable {
    enum Event: Sendable {
        case answer(HTTPResponse)
        case failed(HTTPClientError)
        case delayEnded
    }

    private struct State {
        var events: [Event] = []
        var waiter: CheckedContinuation<Event, Never>?
    }

    private let state = PThreadMutex(State())

    /// Hands `event` to the waiting call, or keeps it for the call's next look.
    func post(_ event: Event) {
        let waiter = state.withLock { state -> CheckedContinuation<Event, Never>? in
            guard let waiter = state.waiter else {
                state.events.append(event)
                return nil
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume(returning: event)
    }

    /// The oldest event not yet taken, if one was posted, without waiting.
    func takeIfPosted() -> Event? {
        state.withLock { $0.events.isEmpty ? nil : $0.events.removeFirst() }
    }

    /// The oldest event not yet taken, waiting for one if there is none. Only one call
    /// waits at a time. An attempt under way ends when its task is cancelled, so the
    /// caller's cancellation reaches this wait as that attempt's failure.
    func next() async -> Event {
        if let event = takeIfPosted() { return event }
        return await withCheckedContinuation { continuation in
            let event = state.withLock { state -> Event? in
                if !state.events.isEmpty { return state.events.removeFirst() }
                state.waiter = continuation
                return nil
            }
            if let event { continuation.resume(returning: event) }
        }
    }
}
