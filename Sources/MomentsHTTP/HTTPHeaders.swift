/// An ordered list of HTTP header fields whose names compare case-insensitively.
///
/// Values of fields that carry credentials (`Authorization`, cookies, anything named
/// like a token, key, secret or password) are redacted from `description`.
///
/// For example:
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers["accept"] // "application/json"
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral, CustomStringConvertible {
    /// One header field.
    public struct Field: Sendable, Hashable, Codable {
        /// The field's name, as given (compared without case).
        public var name: String
        /// The field's value.
        public var value: String

        /// A field `name: value`.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    private var fields: [Field]

    /// Creates an empty list.
    public init() { fields = [] }

    /// Creates a list from name-value pairs, in order.
    public init(_ pairs: [(String, String)]) {
        fields = pairs.map { Field(name: $0.0, value: $0.1) }
    }

    /// Fields in the order written.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The number of fields.
    public var count: Int { fields.count }

    /// Whether there are no fields.
    public var isEmpty: Bool { fields.isEmpty }

    /// The first value of the field named `name` (case-insensitive); setting a value
    /// replaces every field of that name, and setting `nil` removes them.
    public subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveEquals(name) }?.value }
        set {
            guard let newValue else {
                fields.removeAll { $0.name.caseInsensitiveEquals(name) }
                return
            }
            guard let first = fields.firstIndex(where: { $0.name.caseInsensitiveEquals(name) }) else {
                fields.append(Field(name: name, value: newValue))
                return
            }
            fields[first].value = newValue
            let rest = fields.index(after: first)
            fields[rest...].removeAll { $0.name.caseInsensitiveEquals(name) }
        }
    }

    /// Whether a field named `name` is present (case-insensitive).
    public func contains(_ name: String) -> Bool {
        fields.contains { $0.name.caseInsensitiveEquals(name) }
    }

    /// Adds a field, keeping any existing field of the same name.
    public mutating func add(name: String, value: String) {
        fields.append(Field(name: name, value: value))
    }

    /// Returns these headers with `other`'s fields replacing any of the same name.
    package func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        guard !other.isEmpty else { return self }
        var merged = self
        merged.fields.removeAll { field in other.contains(field.name) }
        merged.fields.append(contentsOf: other.fields)
        return merged
    }

    /// The fields, in order.
    public func makeIterator() -> IndexingIterator<[Field]> {
        fields.makeIterator()
    }

    /// Whether the two are equal.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields == rhs.fields
    }

    /// Hashes what equality compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(fields)
    }

    /// The fields as `Name: value` lines, with credentials redacted.
    public var description: String {
        let rendered = fields.map { field in
            "\(field.name): \(Self.isSensitive(field.name) ? "<redacted>" : field.value)"
        }
        return "[" + rendered.joined(separator: ", ") + "]"
    }

    /// Whether a field of this name may carry a credential and must never be logged.
    ///
    /// Asked of every header of every request: it reads the name's bytes in place, without
    /// lowering a copy of it. ("authorization" and "proxy-authorization" hold "auth".)
    package static func isSensitive(_ name: String) -> Bool {
        var name = name
        return name.withUTF8 { bytes in sensitiveFragments.contains { Self.bytes(bytes, containIgnoringASCIICase: $0) } }
    }

    private static let sensitiveFragments: [[UInt8]] = ["auth", "token", "cookie", "key", "secret", "password", "session"]
        .map { Array($0.utf8) }

    /// Substring search on bytes, `haystack` read as if lowercased (ASCII): Foundation's
    /// `String.contains(_:)` goes through `NSString` on Linux and costs microseconds per
    /// call on every request.
    private static func bytes(_ haystack: UnsafeBufferPointer<UInt8>, containIgnoringASCIICase needle: [UInt8]) -> Bool {
        guard needle.count <= haystack.count else { return false }
        for start in 0...(haystack.count - needle.count) where lowered(haystack[start]) == needle[0] {
            var index = 1
            while index < needle.count, lowered(haystack[start + index]) == needle[index] { index += 1 }
            if index == needle.count { return true }
        }
        return false
    }

    private static func lowered(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }
}

extension String {
    /// ASCII case-insensitive equality (header names are ASCII), without allocating.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        for (a, b) in zip(utf8, other.utf8) where a != b {
            let lowerA = (0x41...0x5A).contains(a) ? a | 0x20 : a
            let lowerB = (0x41...0x5A).contains(b) ? b | 0x20 : b
            if lowerA != lowerB { return false }
        }
        return true
    }
}
