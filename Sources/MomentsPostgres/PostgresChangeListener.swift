import Foundation
import Moments
import MomentsSupport
import MomentsObservability

/// The change feed's own connection, on a thread of its own: `LISTEN`s on the channel,
/// reads the rows each announcement of another instance names, and hands them to every
/// subscriber as `SharedChangeEvent.committed(_:)`.
///
/// It proves its connection alive: every `heartbeatInterval` a heartbeat is announced on
/// the channel (through another connection, by `sendHeartbeat`), and if it has not come
/// back through this connection within `heartbeatTimeout`, the connection is taken for
/// dead (a peer that vanished silently leaves the socket open and quiet) and replaced.
///
/// When the connection is lost it reconnects (waiting 50 ms, doubling up to 2 s between
/// attempts), listens again, and reports `SharedChangeEvent.interrupted`: what was
/// announced meanwhile is lost. The thread starts with ``start()``, which returns once
/// the first `LISTEN` is active (or failed), and ends with ``stop()``.
final class PostgresChangeListener: Sendable {
    private struct State {
        var subscribers: [Int: AsyncStream<SharedChangeEvent>.Continuation] = [:]
        var nextID = 0
        var isRunning = false
        var isStopped = false
        /// The write end of the pipe that wakes the thread from `poll`.
        var wakeUp: Int32 = -1
        /// How many times the connection was lost and found again.
        var interruptions = 0
        /// Waits for the first attempt to listen.
        var starting: CheckedContinuation<Void, Never>?
    }

    private let connectionString: String
    private let channel: String
    private let instanceID: String
    private let location: String
    private let logHandler: LogHandler?
    private let heartbeatInterval: Duration
    private let heartbeatTimeout: Duration
    private let answerTimeout: Duration
    private let sendHeartbeat: @Sendable (String) -> Void
    private let state = PThreadMutex(State())

    init(
        connectionString: String, channel: String, instanceID: String, location: String, logHandler: LogHandler?,
        heartbeatInterval: Duration = .seconds(2), heartbeatTimeout: Duration = .seconds(5), answerTimeout: Duration = .seconds(10),
        sendHeartbeat: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.answerTimeout = answerTimeout
        self.connectionString = connectionString
        self.channel = channel
        self.instanceID = instanceID
        self.location = location
        self.logHandler = logHandler
        self.heartbeatInterval = heartbeatInterval
        self.heartbeatTimeout = heartbeatTimeout
        self.sendHeartbeat = sendHeartbeat
    }

    /// The payload of this listener's heartbeat number `count` (not an announcement:
    /// other instances ignore it).
    private func heartbeatPayload(_ count: Int) -> String { "heartbeat:\(instanceID):\(count)" }

    /// A silent connection, found by a heartbeat that did not come back in time.
    struct SilentConnection: Error, CustomStringConvertible {
        let waited: Duration
        var description: String { "no heartbeat came back through the listening connection within \(waited)" }
    }

    /// A new subscriber's events, from the moment the feed listens.
    func subscribe() -> AsyncStream<SharedChangeEvent> {
        let (stream, continuation) = AsyncStream<SharedChangeEvent>.makeStream()
        let id = state.withLock { state -> Int in
            state.nextID += 1
            if state.isStopped { continuation.finish() } else { state.subscribers[state.nextID] = continuation }
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Starts the thread; returns once its first `LISTEN` is active or has failed (it
    /// then keeps trying, and reports `SharedChangeEvent.interrupted` when it succeeds).
    func start() async {
        await withCheckedContinuation { continuation in
            let start = state.withLock { state -> Bool in
                guard !state.isRunning, !state.isStopped else { return false }
                state.isRunning = true
                state.starting = continuation
                return true
            }
            guard start else {
                continuation.resume()
                return
            }
            let thread = Thread { [self] in run() }
            thread.name = "MomentsPostgresListener"
            thread.start()
        }
    }

    private func attempted() {
        let starting = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.starting = nil }
            return state.starting
        }
        starting?.resume()
    }

    /// Ends the thread and every subscriber's stream.
    func stop() {
        let (subscribers, wakeUp) = state.withLock { state in
            state.isStopped = true
            defer { state.subscribers = [:] }
            return (Array(state.subscribers.values), state.wakeUp)
        }
        if wakeUp >= 0 { wake(wakeUp) }
        subscribers.forEach { $0.finish() }
    }

    /// How many times the connection was lost and found again.
    var interruptions: Int { state.withLock { $0.interruptions } }

    private var isStopped: Bool { state.withLock { $0.isStopped } }

    // MARK: - The thread

    private func run() {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else {
            log(.error, "the change feed cannot start: no pipe", ["errno": String(errno)])
            attempted()
            return
        }
        let keepGoing = state.withLock { state -> Bool in
            state.wakeUp = pipeEnds[1]
            return !state.isStopped
        }
        defer {
            attempted()
            state.withLock { $0.wakeUp = -1 }
            close(pipeEnds[0])
            close(pipeEnds[1])
        }
        guard keepGoing else { return }
        var delay = 0.05
        var connectedBefore = false
        while !isStopped {
            do {
                let connection = try PostgresConnection(connectionString: connectionString)
                connection.answerTimeout = answerTimeout
                try connection.execute("LISTEN \(Self.quoted(channel))")
                delay = 0.05
                if connectedBefore {
                    state.withLock { $0.interruptions += 1 }
                    log(.warning, "the change feed's connection is back; events meanwhile were lost", [:])
                    deliver(.interrupted)
                }
                connectedBefore = true
                attempted()
                try listen(on: connection, wakeUp: pipeEnds[0])
            } catch {
                guard !isStopped else { return }
                attempted()
                log(.warning, "the change feed's connection failed; reconnecting", ["error": "\(error)"])
                waitForWakeUp(pipeEnds[0], seconds: delay)
                delay = min(delay * 2, 2)
                // Announcements made while no connection listened are lost.
                connectedBefore = true
            }
        }
    }

    private func listen(on connection: PostgresConnection, wakeUp: Int32) throws {
        var heartbeats = 0
        var nextHeartbeat = ContinuousClock.now
        var awaited: (payload: String, sent: ContinuousClock.Instant)?
        while !isStopped {
            let now = ContinuousClock.now
            if let awaited, now - awaited.sent > heartbeatTimeout { throw SilentConnection(waited: heartbeatTimeout) }
            if awaited == nil, now >= nextHeartbeat {
                heartbeats += 1
                awaited = (heartbeatPayload(heartbeats), now)
                nextHeartbeat = now + heartbeatInterval
                sendHeartbeat(heartbeatPayload(heartbeats))
            }
            let received = try connection.notifications()
            if received.isEmpty {
                // Until the next notification, the heartbeat's deadline or the next one.
                let until = awaited.map { $0.sent + heartbeatTimeout } ?? nextHeartbeat
                let milliseconds = max(1, Int32(clamping: Int(((until - ContinuousClock.now).seconds * 1_000).rounded(.up))))
                var descriptors = [pollfd(fd: connection.socket, events: Int16(POLLIN), revents: 0), pollfd(fd: wakeUp, events: Int16(POLLIN), revents: 0)]
                _ = poll(&descriptors, 2, milliseconds)
                if descriptors[1].revents != 0 { drain(wakeUp) }
                continue
            }
            for notification in received {
                if notification.payload.hasPrefix("heartbeat:") {
                    if notification.payload == awaited?.payload { awaited = nil }
                    continue
                }
                guard let announcement = ChangeAnnouncement(payload: notification.payload) else { continue }
                // This instance's own saves are not delivered, but for what they contested.
                let isOwn = announcement.origin == instanceID
                if isOwn, !announcement.isContest { continue }
                if announcement.everything {
                    deliver(.interrupted)
                    continue
                }
                let commit = try PostgresRows.committedState(
                    momentIDs: isOwn ? announcement.contested : announcement.momentIDs,
                    userIDs: isOwn ? announcement.contestedUsers : announcement.userIDs,
                    contested: Set(announcement.contested), contestedUsers: Set(announcement.contestedUsers), on: connection
                )
                var withRemovals = commit
                if !isOwn {
                    withRemovals.removedUserIDs = announcement.removedUsers
                    withRemovals.removedEverything = announcement.removedEverything
                }
                deliver(.committed(withRemovals))
            }
        }
    }

    private func deliver(_ event: SharedChangeEvent) {
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { subscriber.yield(event) }
    }

    private func waitForWakeUp(_ descriptor: Int32, seconds: Double) {
        var descriptors = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        _ = poll(&descriptors, 1, Int32(seconds * 1_000))
        if descriptors[0].revents != 0 { drain(descriptor) }
    }

    private func wake(_ descriptor: Int32) {
        var byte: UInt8 = 1
        _ = write(descriptor, &byte, 1)
    }

    private func drain(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = read(descriptor, &buffer, buffer.count)
    }

    private func log(_ level: LogRecord.Level, _ message: String, _ metadata: [String: String]) {
        logHandler?(LogRecord(level: level, message: message, metadata: metadata.merging(["location": location]) { current, _ in current }))
    }

    /// `name` as an SQL identifier.
    static func quoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
