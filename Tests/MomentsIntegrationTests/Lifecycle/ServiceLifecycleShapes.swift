import Foundation
import MomentsSupport

// Local stand-ins for the parts of swift-service-lifecycle that the article
// "Running as a service" uses, with that package's names and shapes, so its code
// compiles and runs here without the package depending on it: `Service`, a
// `ServiceGroup` that shuts its services down in reverse order on a graceful shutdown,
// and `cancelWhenGracefulShutdown`. (`Logger` is the stand-in of SwiftServerShapes.swift.)

protocol Service: Sendable {
    func run() async throws
}

struct UnixSignal: Sendable, Hashable {
    let number: Int32
    static let sigterm = UnixSignal(number: SIGTERM)
    static let sigint = UnixSignal(number: SIGINT)
}

/// One service's graceful-shutdown trigger, found through a task-local value.
final class GracefulShutdownTrigger: Sendable {
    private let state = PThreadMutex<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    @TaskLocal static var current: GracefulShutdownTrigger?

    func fire() {
        let waiters = state.withLock { state in
            defer { state = (true, []) }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let fired = state.withLock { state -> Bool in
                if state.fired { return true }
                state.waiters.append(continuation)
                return false
            }
            if fired { continuation.resume() }
        }
    }
}

private enum ValueOrShutdown<T: Sendable>: Sendable {
    case value(T)
    case gracefulShutdown
}

/// Runs `operation`, cancelling it once a graceful shutdown is triggered; returns what
/// it returns.
func cancelWhenGracefulShutdown<T: Sendable>(_ operation: @Sendable @escaping () async throws -> T) async throws -> T {
    guard let trigger = GracefulShutdownTrigger.current else { return try await operation() }
    return try await withThrowingTaskGroup(of: ValueOrShutdown<T>.self) { group in
        group.addTask { .value(try await operation()) }
        group.addTask {
            await withTaskCancellationHandler { await trigger.wait() } onCancel: { trigger.fire() }
            return .gracefulShutdown
        }
        while let next = try await group.next() {
            if case .value(let value) = next {
                group.cancelAll()
                return value
            }
            group.cancelAll()  // the graceful shutdown: the operation is cancelled, and ends
        }
        throw CancellationError()
    }
}

/// Runs services until a graceful shutdown (``triggerGracefulShutdown()``, or one of the
/// signals), which it hands to the services one at a time, last first.
actor ServiceGroup {
    private let services: [any Service]
    private let triggers: [GracefulShutdownTrigger]
    private var finished: [Int: CheckedContinuation<Void, Never>] = [:]
    private var done: Set<Int> = []
    let gracefulShutdownSignals: [UnixSignal]
    /// The order the services' runs returned in.
    private(set) var endOrder: [Int] = []

    init(services: [any Service], gracefulShutdownSignals: [UnixSignal], logger: Logger) {
        self.services = services
        self.triggers = services.map { _ in GracefulShutdownTrigger() }
        self.gracefulShutdownSignals = gracefulShutdownSignals
    }

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, service) in services.enumerated() {
                let trigger = triggers[index]
                group.addTask {
                    try await GracefulShutdownTrigger.$current.withValue(trigger) { try await service.run() }
                    await self.ended(index)
                }
            }
            try await group.waitForAll()
        }
    }

    /// Shuts the services down one at a time, the last listed first, each once the one
    /// after it has ended.
    func triggerGracefulShutdown() async {
        for index in services.indices.reversed() {
            triggers[index].fire()
            if !done.contains(index) { await withCheckedContinuation { finished[index] = $0 } }
        }
    }

    private func ended(_ index: Int) {
        done.insert(index)
        endOrder.append(index)
        finished.removeValue(forKey: index)?.resume()
    }
}
