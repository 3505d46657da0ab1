import Foundation
public import MomentsHTTP
import MomentsSupport

/// A transport that wraps another (an ``InMemoryBFF``, a `StubTransport`, a real
/// transport) and injects faults into the requests that match its rules: latency,
/// statuses, refused and reset connections before and after the server read the
/// request, stalls and truncated answers.
///
/// Rules are kept in the order they were added. Each request takes the first rule that
/// matches it and has uses left, and uses it up once; a request no rule takes is passed
/// on untouched. Adding `times: 1` rules one after another scripts the next requests in
/// turn:
/// ```swift
/// let transport = FaultInjectingTransport(wrapping: bff)
/// transport.inject(.status(503))                  // the first request
/// transport.inject(.resetAfterRead, when: FaultInjectingTransport.operation("updateMomentLike"))
/// transport.inject(.latency(.seconds(1)), times: nil)       // every other request
/// ```
/// Latency runs on `clock`: give a `ManualClock` and the test decides when it is over.
public final class FaultInjectingTransport: HTTPTransport {
    /// Which requests a rule applies to.
    public typealias Matcher = @Sendable (HTTPRequest) -> Bool

    /// One request as the transport saw it, and what was done to it.
    public struct Delivery: Sendable {
        /// The request.
        public var request: HTTPRequest
        /// The fault injected, or `nil` when the request was passed on untouched.
        public var fault: TransportFault?
        /// Whether the wrapped transport (the server) received the request.
        public var reachedServer: Bool
    }

    private struct Rule {
        var fault: TransportFault
        var remaining: Int?
        var matches: Matcher
    }

    private struct State {
        var rules: [Rule] = []
        var deliveries: [Delivery] = []
        var waiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []
    }

    private let wrapped: any HTTPTransport
    private let clock: any MomentsClock
    private let state = PThreadMutex(State())

    /// A transport passing requests to `wrapped`, with faults as its rules say; latency
    /// is measured on `clock`.
    public init(wrapping wrapped: any HTTPTransport, clock: any MomentsClock = SystemClock()) {
        self.wrapped = wrapped
        self.clock = clock
    }

    /// A matcher of the GraphQL requests whose `operationName` is `name`.
    public static func operation(_ name: String) -> Matcher {
        { request in GraphQLRequestBody(request.body)?.operationName == name }
    }

    /// Injects `fault` into the next `times` requests `when` matches (every request by
    /// default); `times` `nil` means every such request from now on.
    public func inject(_ fault: TransportFault, times: Int? = 1, when matches: @escaping Matcher = { _ in true }) {
        state.withLock { $0.rules.append(Rule(fault: fault, remaining: times, matches: matches)) }
    }

    /// Removes every rule: later requests pass on untouched.
    public func removeAllFaults() {
        state.withLock { $0.rules.removeAll() }
    }

    /// Every request received so far, in order, with the fault it met.
    public var deliveries: [Delivery] { state.withLock { $0.deliveries } }

    /// How many requests the wrapped transport (the server) received.
    public var requestsThatReachedServer: Int { state.withLock { $0.deliveries.count { $0.reachedServer } } }

    /// Returns once `count` requests have been received: an event the code under test
    /// causes, however long a busy machine takes to get there.
    public func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let reached = state.withLock { state -> Bool in
                if state.deliveries.count >= count { return true }
                state.waiters.append((count, continuation))
                return false
            }
            if reached { continuation.resume() }
        }
    }

    /// Sends `request` through the rules (see the type's documentation).
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let (fault, woken) = state.withLock { state -> (TransportFault?, [CheckedContinuation<Void, Never>]) in
            var fault: TransportFault?
            if let index = state.rules.firstIndex(where: { $0.remaining != 0 && $0.matches(request) }) {
                fault = state.rules[index].fault
                if let remaining = state.rules[index].remaining { state.rules[index].remaining = remaining - 1 }
            }
            state.deliveries.append(Delivery(request: request, fault: fault, reachedServer: fault?.reachesServer ?? true))
            let count = state.deliveries.count
            let woken = state.waiters.filter { $0.count <= count }.map(\.continuation)
            state.waiters.removeAll { $0.count <= count }
            return (fault, woken)
        }
        for waiter in woken { waiter.resume() }
        guard let fault else { return try await wrapped.send(request) }
        return try await apply(fault, to: request)
    }

    private func apply(_ fault: TransportFault, to request: HTTPRequest) async throws -> HTTPResponse {
        switch fault {
        case .latency(let delay):
            let started = clock.now
            let response = try await wrapped.send(request)
            try await wait(until: started + delay, deadline: started + request.timeout)
            return response
        case .status(let code, let headers, let body):
            return HTTPResponse(statusCode: code, headers: headers, body: body)
        case .refuse:
            throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionRefused, message: "injected: nothing listens"))
        case .resetBeforeRead:
            throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "injected: reset before the request was read"))
        case .resetAfterRead:
            _ = try await wrapped.send(request)
            throw HTTPClientError.transportFailure(TransportFailure(kind: .connectionReset, message: "injected: reset after the request was read"))
        case .stall:
            let started = clock.now
            try await wait(until: nil, deadline: started + request.timeout)
            throw HTTPClientError.cancelled()
        case .truncate(let keepingBytes):
            let response = try await wrapped.send(request)
            guard response.body.count > keepingBytes else { return response }
            throw HTTPClientError.transportFailure(TransportFailure(
                kind: .truncatedResponse, message: "injected: \(keepingBytes) of \(response.body.count) bytes arrived"))
        }
    }

    /// Waits on the clock until `end` (`nil`: forever) or, as a real transport does, fails
    /// with `timedOut` at the request's deadline if that comes first; ends with
    /// `cancelled` when the calling task is cancelled.
    private func wait(until end: ContinuousClock.Instant?, deadline: ContinuousClock.Instant) async throws {
        let timesOut = end.map { deadline < $0 } ?? true
        do {
            try await clock.sleep(until: min(end ?? deadline, deadline))
        } catch {
            throw HTTPClientError.cancelled()
        }
        if timesOut {
            throw HTTPClientError.transportFailure(TransportFailure(kind: .timedOut, message: "injected: the request's deadline passed"))
        }
    }

    /// Passes the shutdown on to the wrapped transport.
    public func shutdown() async {
        await wrapped.shutdown()
    }
}
