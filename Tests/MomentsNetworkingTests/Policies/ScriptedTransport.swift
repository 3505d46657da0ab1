import Foundation
import MomentsNetworking
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// A transport answering from a closure that sees the call number, counting calls and
/// the most that ran at once; `delay` makes each call slow (and cancellable).
final class ScriptedTransport: HTTPTransport {
    typealias Handler = @Sendable (_ call: Int, _ request: HTTPRequest) async throws -> HTTPResponse

    private struct State {
        var calls = 0
        var running = 0
        var maximumRunning = 0
        var requests: [HTTPRequest] = []
        var callWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let state = PThreadMutex(State())
    private let handler: Handler
    private let delay: Duration?

    init(delay: Duration? = nil, _ handler: @escaping Handler) {
        self.delay = delay
        self.handler = handler
    }

    var calls: Int { state.withLock { $0.calls } }

    /// Returns once the transport has been called `count` times: an event the code under
    /// test reports, however long a busy machine takes to get there.
    func waitForCalls(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state -> Bool in
                if state.calls >= count { return true }
                state.callWaiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }
    var maximumRunning: Int { state.withLock { $0.maximumRunning } }
    var requests: [HTTPRequest] { state.withLock { $0.requests } }

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (call, reached) = state.withLock { state -> (Int, [CheckedContinuation<Void, Never>]) in
            state.calls += 1
            state.running += 1
            state.maximumRunning = max(state.maximumRunning, state.running)
            state.requests.append(request)
            let calls = state.calls
            let reached = state.callWaiters.filter { $0.count <= calls }.map(\.continuation)
            state.callWaiters.removeAll { $0.count <= calls }
            return (calls, reached)
        }
        for waiter in reached { waiter.resume() }
        defer { state.withLock { $0.running -= 1 } }
        if let delay {
            do { try await Task.sleep(for: delay) } catch { throw HTTPClientError.cancelled() }
        }
        return try await handler(call, request)
    }
}

func ok(_ json: String = #"{"id":1,"name":"Ada"}"#, headers: HTTPHeaders = [:]) -> HTTPResponse {
    HTTPResponse(statusCode: 200, headers: headers, body: Data(json.utf8))
}

func status(_ code: Int, headers: HTTPHeaders = [:]) -> HTTPResponse {
    HTTPResponse(statusCode: code, headers: headers, body: Data(#"{"error":"status \#(code)"}"#.utf8))
}

/// Collects log records.
final class LogSink: Sendable {
    private let records = PThreadMutex<[LogRecord]>([])
    var all: [LogRecord] { records.withLock { $0 } }
    var handler: LogHandler { { record in self.records.withLock { $0.append(record) } } }
}

/// Records the delays a retry policy asked for, without waiting.
final class SleepRecorder: Sendable {
    private let delays = PThreadMutex<[Duration]>([])
    var all: [Duration] { delays.withLock { $0 } }
    var sleep: @Sendable (Duration) async throws -> Void { { delay in self.delays.withLock { $0.append(delay) } } }
}
