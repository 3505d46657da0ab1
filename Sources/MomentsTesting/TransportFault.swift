public import Foundation
public import MomentsHTTP

/// What ``FaultInjectingTransport`` does to a request instead of, or on top of, passing
/// it to the transport it wraps. Each fault is one failure a real network or server
/// produces, seen from the client the way a real transport reports it.
public enum TransportFault: Sendable {
    /// The answer comes `Duration` later (on the transport's clock); the request is
    /// passed on first, so the server has already computed it. Cancellation ends the
    /// wait, and so does the request's deadline (`HTTPRequest.timeout`), with
    /// `.timedOut`, as a real transport's would.
    case latency(Duration)
    /// The server answers with this status (and body) without doing anything: the
    /// wrapped transport never sees the request.
    case status(Int, headers: HTTPHeaders = [:], body: Data = Data())
    /// Nothing listens: `TransportFailure.Kind.connectionRefused`. The wrapped transport
    /// never sees the request, and the client knows it was not sent.
    case refuse
    /// The connection is reset before the server read the request: the wrapped transport
    /// never sees it, but the client cannot know that (`.connectionReset`).
    case resetBeforeRead
    /// The connection is reset after the server read and processed the request: the
    /// wrapped transport answers, and the answer is lost (`.connectionReset`). A
    /// mutation sent again after this one is a mutation applied twice.
    case resetAfterRead
    /// The server reads the request and never answers: the call waits until it is
    /// cancelled, or fails with `.timedOut` at the request's deadline
    /// (`HTTPRequest.timeout`, on the transport's clock). The wrapped transport never
    /// sees it.
    case stall
    /// The wrapped transport's answer is cut after `keepingBytes` bytes of its body
    /// (`.truncatedResponse`); the server has processed the request.
    case truncate(keepingBytes: Int)
}

extension TransportFault: CustomStringConvertible {
    /// A one-line description, for logs and test messages.
    public var description: String {
        switch self {
        case .latency(let delay): "latency \(delay)"
        case .status(let code, _, _): "status \(code)"
        case .refuse: "refuse"
        case .resetBeforeRead: "reset before read"
        case .resetAfterRead: "reset after read"
        case .stall: "stall"
        case .truncate(let bytes): "truncate to \(bytes) bytes"
        }
    }

    /// Whether the server behind the transport saw the request.
    var reachesServer: Bool {
        switch self {
        case .latency, .resetAfterRead, .truncate: true
        case .status, .refuse, .resetBeforeRead, .stall: false
        }
    }
}
