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
    /// Vendors' trace state, as W3C Trace Context allows it: at most 32 list members, each
    /// `key=value` with a lowercase key (or `tenant@system`) and a printable ASCII value,
    /// at most 256 characters; invalid members and later duplicates of a key are dropped
    /// (never the context), and `nil` when none is left.
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
        self.init(valid: String(parts[1]), spanID: String(parts[2]), isSampled: flags & 1 == 1, tracestate: Self.sanitized(tracestate))
    }

    /// A context of the given ids, hexadecimal as `traceparent` carries them (either
    /// case); `nil` unless the trace id has 32 digits and the span id 16, neither all zero.
    public init?(traceID: String, spanID: String, isSampled: Bool = true, tracestate: String? = nil) {
        let trace = traceID.lowercased(), span = spanID.lowercased()
        guard Self.isHex(Substring(trace), count: 32), Self.isHex(Substring(span), count: 16),
              trace.contains(where: { $0 != "0" }), span.contains(where: { $0 != "0" }) else { return nil }
        self.init(valid: trace, spanID: span, isSampled: isSampled, tracestate: Self.sanitized(tracestate))
    }

    private init(valid traceID: String, spanID: String, isSampled: Bool, tracestate: String?) {
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
        self.tracestate = tracestate
    }

    /// A new trace, sampled.
    public static func random() -> TraceContext {
        TraceContext(valid: randomHex(bytes: 16), spanID: randomHex(bytes: 8), isSampled: true, tracestate: nil)
    }

    /// The same trace, under a new span: what a child of this context is.
    public func child() -> TraceContext {
        TraceContext(valid: traceID, spanID: Self.randomHex(bytes: 8), isSampled: isSampled, tracestate: tracestate)
    }

    /// `tracestate` as W3C Trace Context allows it (see ``tracestate``).
    static func sanitized(_ tracestate: String?) -> String? {
        guard let tracestate else { return nil }
        var kept: [Substring] = []
        var keys = Set<Substring>()
        for raw in tracestate.split(separator: ",", omittingEmptySubsequences: true) {
            let member = raw.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))[...]
            guard !member.isEmpty else { continue }
            guard member.utf8.count <= 256, let equals = member.firstIndex(of: "="),
                  isValidKey(member[..<equals]), isValidValue(member[member.index(after: equals)...]) else { continue }
            let key = member[..<equals]
            guard keys.insert(key).inserted else { continue }
            kept.append(member)
            if kept.count == 32 { break }
        }
        return kept.isEmpty ? nil : kept.joined(separator: ",")
    }

    /// `lcalpha 0*255(lcalpha / DIGIT / "_" / "-" / "*" / "/")`, or `tenant@system`.
    private static func isValidKey(_ key: Substring) -> Bool {
        func allowed(_ byte: UInt8) -> Bool {
            (97...122).contains(byte) || (48...57).contains(byte) || byte == 95 || byte == 45 || byte == 42 || byte == 47
        }
        let bytes = Array(key.utf8)
        if let at = bytes.firstIndex(of: 64) {
            let tenant = bytes[..<at], system = bytes[(at + 1)...]
            guard let first = tenant.first, (97...122).contains(first) || (48...57).contains(first), tenant.count <= 241,
                  let head = system.first, (97...122).contains(head), system.count <= 14 else { return false }
            return tenant.allSatisfy(allowed) && system.allSatisfy(allowed)
        }
        guard let first = bytes.first, (97...122).contains(first), bytes.count <= 256 else { return false }
        return bytes.allSatisfy(allowed)
    }

    /// `0*255(chr) nblk-chr`: printable ASCII but `,` and `=`, not ending in a space.
    private static func isValidValue(_ value: Substring) -> Bool {
        let bytes = value.utf8
        guard let last = bytes.last, last != 0x20, bytes.count <= 256 else { return false }
        return bytes.allSatisfy { (0x20...0x7E).contains($0) && $0 != 0x2C && $0 != 0x3D }
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

    /// `bytes` random bytes (16 for a trace ID, 8 for a span ID; at most 16) as lowercase
    /// hex, never all zeros (W3C Trace Context makes an all-zero ID invalid).
    ///
    /// Eight bytes per draw of the system's generator: one `getrandom` call, where a
    /// byte at a time made eight for a span ID and sixteen for a trace ID, on every span.
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = min(bytes, 16)
        while true {
            var drawn: (UInt64, UInt64) = (generator.next(), 0)
            if bytes > 8 { drawn.1 = generator.next() }
            guard drawn != (0, 0) else { continue }
            return String(unsafeUninitializedCapacity: bytes * 2) { text in
                withUnsafeBytes(of: &drawn) { random in
                    for index in 0..<bytes {
                        let byte = random[index]
                        text[2 * index] = hexDigits[Int(byte >> 4)]
                        text[2 * index + 1] = hexDigits[Int(byte & 15)]
                    }
                }
                return bytes * 2
            }
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}
