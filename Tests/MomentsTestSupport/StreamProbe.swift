import MomentsSupport

/// Consumes an `AsyncSequence` in a task and records what arrives, so a test can wait for
/// a value or check that none came.
///
/// The waits wake when a value arrives (or the sequence ends), not on a clock: the
/// timeout only bounds a wait that would otherwise hang.
public final class StreamProbe<Element: Sendable>: Sendable {
    private final class Recorder: Sendable {
        private struct State {
            var values: [Element] = []
            var isFinished = false
            var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter = 0
        }

        private let state = PThreadMutex(State())

        var values: [Element] { state.withLock { $0.values } }

        func append(_ element: Element) {
            wakeAll { $0.values.append(element) }
        }

        func finish() {
            wakeAll { $0.isFinished = true }
        }

        /// Returns once more than `count` values have arrived, the sequence has ended, or
        /// `deadline` has passed.
        func waitForMore(than count: Int, until deadline: ContinuousClock.Instant) async {
            let id = state.withLock { state -> Int in
                state.nextWaiter += 1
                return state.nextWaiter
            }
            let timer = Task { [weak self] in
                try? await Task.sleep(until: deadline)
                self?.wake(id)
            }
            await withCheckedContinuation { continuation in
                let ready = state.withLock { state -> Bool in
                    if state.values.count > count || state.isFinished || ContinuousClock.now >= deadline { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            timer.cancel()
        }

        private func wake(_ id: Int) {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }

        private func wakeAll(after change: (inout State) -> Void) {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                change(&state)
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            waiters.forEach { $0.resume() }
        }

        var isFinished: Bool { state.withLock { $0.isFinished } }
    }

    private let recorder = Recorder()
    private let task: Task<Void, Never>

    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let recorder = self.recorder
        task = Task {
            do {
                for try await element in sequence { recorder.append(element) }
            } catch {}
            recorder.finish()
        }
    }

    public var values: [Element] { recorder.values }

    /// Waits until the values seen satisfy `satisfied`, the sequence ends, or `timeout`
    /// passes; returns the values.
    private func wait(timeout: Duration, until satisfied: ([Element]) -> Bool) async -> [Element] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let seen = values
            if satisfied(seen) || recorder.isFinished || ContinuousClock.now >= deadline { return values }
            await recorder.waitForMore(than: seen.count, until: deadline)
        }
    }

    /// Waits until `count` values have arrived or `timeout` passes; returns the values.
    @discardableResult
    public func waitFor(count: Int, timeout: Duration = .seconds(20)) async -> [Element] {
        await wait(timeout: timeout) { $0.count >= count }
    }

    /// Waits until the newest value satisfies `condition` or `timeout` passes; returns
    /// the newest value.
    @discardableResult
    public func waitUntil(timeout: Duration = .seconds(20), _ condition: (Element) -> Bool) async -> Element? {
        await wait(timeout: timeout) { $0.last.map(condition) ?? false }.last
    }

    /// Waits until any value so far satisfies `condition` or `timeout` passes; returns
    /// the first that does.
    @discardableResult
    public func waitForAny(timeout: Duration = .seconds(20), _ condition: (Element) -> Bool) async -> Element? {
        await wait(timeout: timeout) { $0.contains(where: condition) }.first(where: condition)
    }

    /// Waits until the sequence ends (or `timeout` passes); returns every value seen. A
    /// test that checks nothing more arrived ends the stream (the store's `shutdown`
    /// ends each stream after its last value) and waits for this, instead of waiting
    /// for a length of time.
    @discardableResult
    public func waitForEnd(timeout: Duration = .seconds(60)) async -> [Element] {
        await wait(timeout: timeout) { _ in false }
    }

    /// Whether the sequence has ended.
    public var isFinished: Bool { recorder.isFinished }

    public func cancel() { task.cancel() }

    deinit { cancel() }
}

/// Polls `condition`, a state the code under test reports, until it holds; returns
/// whether it held. It returns as soon as the condition holds, however busy the machine:
/// `timeout` only turns a hang into a failure, and is generous for that reason.
public func eventually(timeout: Duration = .seconds(300), _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}
