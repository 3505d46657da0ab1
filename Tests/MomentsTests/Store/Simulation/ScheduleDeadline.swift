import Synchronization

/// Runs one simulated schedule, reporting one that does not end within `deadline` as a
/// failure (with the progress it last reported) instead of hanging the test run.
///
/// The schedule runs in an unstructured task, so a schedule stuck forever does not hold
/// the test with it. The watchdog is a hang detector, not a wait: the schedule's end
/// cancels it.
func runSchedule(deadline: Duration, _ schedule: @escaping @Sendable (Locked<String?>) async -> [String]) async -> [String] {
    let stuck = Locked<String?>(nil)
    let waiter = Locked<CheckedContinuation<[String], Never>?>(nil)
    let finish: @Sendable ([String]) -> Void = { failures in
        var continuation: CheckedContinuation<[String], Never>?
        waiter.update { continuation = $0; $0 = nil }
        continuation?.resume(returning: failures)
    }
    return await withCheckedContinuation { continuation in
        waiter.update { $0 = continuation }
        let watchdog = Task {
            guard (try? await Task.sleep(for: deadline)) != nil else { return }
            finish(["the schedule did not end within \(deadline): \(stuck.value ?? "?")"])
        }
        Task {
            let failures = await schedule(stuck)
            watchdog.cancel()
            finish(failures)
        }
    }
}

/// A value shared between tasks.
final class Locked<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    init(_ value: Value) { storage = Mutex(value) }

    var value: Value { storage.withLock { $0 } }

    func update(_ body: (inout Value) -> Void) { storage.withLock { body(&$0) } }
}
