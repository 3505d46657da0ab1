import MomentsSupport

/// One task sleeping on a ``MomentsClock``: resumed once, by its wake-up or by
/// cancellation, whichever comes first; the other is then forgotten.
final class ClockSleeper: Sendable {
    private enum Phase {
        case created
        case waiting(CheckedContinuation<Void, any Error>, ClockWakeUp?)
        case ended
    }

    private let phase = PThreadMutex(Phase.created)

    /// Installs the sleeper's continuation; `false` (having resumed it) when cancellation
    /// came first.
    func wait(_ continuation: CheckedContinuation<Void, any Error>) -> Bool {
        let cancelled = phase.withLock { phase -> Bool in
            guard case .created = phase else { return true }
            phase = .waiting(continuation, nil)
            return false
        }
        if cancelled { continuation.resume(throwing: CancellationError()) }
        return !cancelled
    }

    /// Keeps the wake-up, to cancel it if cancellation comes first; cancels it at once if
    /// the sleep has already ended.
    func hold(_ wakeUp: ClockWakeUp) {
        let ended = phase.withLock { phase -> Bool in
            guard case .waiting(let continuation, .none) = phase else { return true }
            phase = .waiting(continuation, wakeUp)
            return false
        }
        if ended { wakeUp.cancel() }
    }

    /// Ends the sleep with `result`, unless it has ended.
    func end(with result: Result<Void, any Error>) {
        let ending = phase.withLock { phase -> (CheckedContinuation<Void, any Error>, ClockWakeUp?)? in
            switch phase {
            case .created:
                phase = .ended
                return nil
            case .waiting(let continuation, let wakeUp):
                phase = .ended
                return (continuation, wakeUp)
            case .ended:
                return nil
            }
        }
        guard let (continuation, wakeUp) = ending else { return }
        wakeUp?.cancel()
        continuation.resume(with: result)
    }
}
