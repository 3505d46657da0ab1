import Foundation

/// The W3C Trace Context of the work at hand: which trace it belongs to, and which span
/// of it is the parent of what the SDK does next.
///
/// Set it for a task with ``withValue(_:operation:isolation:)`` (or continue one that arrived with
/// an incoming request, ``init(traceparent:tracestate:)``): every request the SDK sends
/// for that work carries a `traceparent` with the same trace id and a new span id per
/// attempt (retries and hedges included), and `tracestate` unchanged. Without one, the
/// SDK sends no trace headers and does no tracing work.
///
/// For example:
/// ```swift
/// let incoming = TraceContext(traceparent: request.headers["traceparent"], tracestate: request.headers["tracestate"])
/// try await TraceContext.withValue(incoming ?? .random()) {
///     try await store.refresh(userID: userID)
/// }
/// ```
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The trace, 32 lowercase hexadecimal digits (16 bytes, not all zero).
    public let traceID: String
    /// The parent span, 16 lowercase hexadecimal digits (8 bytes, not all zero).
    public let spanID: String
    /// Whether the trace is sampled (the `traceparent` flags' lowest bit).
    public let isSampled: Bool
    /// Vendors' trace state, passed through unchanged.
    public let tracestate: String?

    /// The context of `traceparent` (`00-<trace id>-<span id>-<flags>`) and `tracestate`;
    /// `nil` if `traceparent` is absent or invalid: version `00` with exactly four fields,
    /// or a later version (not `ff`) whose first four fields read as version `00`'s.
    public init?(traceparent: String?, tracestate: String? = nil) {
        guard let traceparent else { return nil }
        let parts = traceparent.trimmingCharacters(in: .whitespaces).split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count >= 4, Self.isHex(parts[0], count: 2), parts[0] != "ff",
              Self.isHex(parts[1], count: 32), Self.isHex(parts[2], count: 16), Self.isHex(parts[3], count: 2),
              parts[1] != String(repeating: "0", count: 32), parts[2] != String(repeating: "0", count: 16),
              let flags = UInt8(parts[3], radix: 16) else { return nil }
        if parts[0] == "00", parts.count != 4 { return nil }
        self.init(traceID: String(parts[1]), spanID: String(parts[2]), isSampled: flags & 1 == 1, tracestate: tracestate)
    }

    /// A context of the given ids (lowercase hexadecimal, as `traceparent` carries them).
    public init(traceID: String, spanID: String, isSampled: Bool = true, tracestate: String? = nil) {
        self.traceID = traceID.lowercased()
        self.spanID = spanID.lowercased()
        self.isSampled = isSampled
        self.tracestate = tracestate
    }

    /// A new trace, sampled.
    public static func random() -> TraceContext {
        TraceContext(traceID: randomHex(bytes: 16), spanID: randomHex(bytes: 8))
    }

    /// The same trace, under a new span: what a child of this context is.
    public func child() -> TraceContext {
        TraceContext(traceID: traceID, spanID: Self.randomHex(bytes: 8), isSampled: isSampled, tracestate: tracestate)
    }

    /// The `traceparent` header value.
    public var traceparent: String { "00-\(traceID)-\(spanID)-\(isSampled ? "01" : "00")" }

    /// The `traceparent` header value.
    public var description: String { traceparent }

    /// The context of the current task, if one was set.
    @TaskLocal public static var current: TraceContext?

    /// Runs `operation` with `context` as the current task's trace context.
    public static func withValue<T>(
        _ context: TraceContext?, operation: () async throws -> T, isolation: isolated (any Actor)? = #isolation
    ) async rethrows -> T {
        try await $current.withValue(context, operation: operation, isolation: isolation)
    }

    private static func isHex(_ text: Substring, count: Int) -> Bool {
        text.utf8.count == count && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        text.reserveCapacity(bytes * 2)
        repeat {
            text = ""
            for _ in 0..<bytes {
                let byte = UInt8.random(in: 0...255, using: &generator)
                text += String(byte >> 4, radix: 16) + String(byte & 15, radix: 16)
            }
        } while text.allSatisfy { $0 == "0" }
        return text
    }
}
