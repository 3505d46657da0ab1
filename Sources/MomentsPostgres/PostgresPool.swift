import MomentsSupport

/// A bounded set of ``PostgresSession``s: at most `size` connections, handed to one
/// caller at a time; callers beyond that wait in arrival order.
final class PostgresPool: Sendable {
    private struct State {
        var idle: [PostgresSession]
        var waiters: [CheckedContinuation<PostgresSession, Never>] = []
    }

    private let state: PThreadMutex<State>
    private let sessions: [PostgresSession]

    init(connectionString: String, size: Int, answerTimeout: Duration = .seconds(10)) {
        let sessions = (0..<max(1, size)).map {
            PostgresSession(connectionString: connectionString, name: "MomentsPostgres-\($0)", answerTimeout: answerTimeout)
        }
        self.sessions = sessions
        state = PThreadMutex(State(idle: sessions))
    }

    /// Closes every session's connection, each once the call running on it has ended;
    /// later calls fail with `connectionFailed`.
    func close() async {
        for session in sessions { await session.close() }
    }

    /// Runs `body` on a free session's connection (see ``PostgresSession/run(retry:_:)``).
    func run<T: Sendable>(retry: Bool, _ body: @escaping @Sendable (PostgresConnection) throws -> T) async throws -> T {
        let session = await checkOut()
        defer { checkIn(session) }
        return try await session.run(retry: retry, body)
    }

    private func checkOut() async -> PostgresSession {
        if let session = state.withLock({ $0.idle.popLast() }) { return session }
        return await withCheckedContinuation { continuation in
            let session = state.withLock { state -> PostgresSession? in
                if let session = state.idle.popLast() { return session }
                state.waiters.append(continuation)
                return nil
            }
            if let session { continuation.resume(returning: session) }
        }
    }

    private func checkIn(_ session: PostgresSession) {
        let waiter = state.withLock { state -> CheckedContinuation<PostgresSession, Never>? in
            guard !state.waiters.isEmpty else {
                state.idle.append(session)
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume(returning: session)
    }
}
