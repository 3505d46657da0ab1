import Synchronization

/// Consumes an `AsyncSequence` in a task and records what arrives, so a test can wait for
/// a value or check that none came.
public final class StreamProbe<Element: Sendable>: Sendable {
    private final class Recorder: Sendable {
        let values = Mutex<[Element]>([])
    }

    private let recorder = Recorder()
    private let task: Task<Void, Never>

    public init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
        let recorder = self.recorder
        task = Task {
            do {
                for try await element in sequence { recorder.values.withLock { $0.append(element) } }
            } catch {}
        }
    }

    public var values: [Element] { recorder.values.withLock { $0 } }

    /// Waits until `count` values have arrived or `timeout` passes; returns the values.
    @discardableResult
    public func waitFor(count: Int, timeout: Duration = .seconds(20)) async -> [Element] {
        let deadline = ContinuousClock.now + timeout
        while values.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return values
    }

    /// Waits until the newest value satisfies `condition` or `timeout` passes.
    @discardableResult
    public func waitUntil(timeout: Duration = .seconds(20), _ condition: (Element) -> Bool) async -> Element? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let last = values.last, condition(last) { return last }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return values.last
    }

    /// Waits until any value so far satisfies `condition` or `timeout` passes; returns
    /// the first that does.
    @discardableResult
    public func waitForAny(timeout: Duration = .seconds(20), _ condition: (Element) -> Bool) async -> Element? {
        let deadline = ContinuousClock.now + timeout
        repeat {
            if let match = values.first(where: condition) { return match }
            try? await Task.sleep(for: .milliseconds(2))
        } while ContinuousClock.now < deadline
        return values.first(where: condition)
    }

    public func cancel() { task.cancel() }

    deinit { cancel() }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
public func eventually(timeout: Duration = .seconds(20), _ condition: @Sendable () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(2))
    }
    return await condition()
}
