/// A forward-only reader of JSON bytes, for the fast decoding of timelines.
///
/// It understands all of JSON but reports nothing precise: any surprise throws
/// ``JSONScanner/Unreadable`` and the caller falls back to `JSONDecoder`, whose errors
/// are the ones users see.
struct JSONScanner: ~Copyable {
    struct Unreadable: Error {}

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private static let maximumDepth = 256

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    // MARK: Structure

    mutating func beginObject() throws(Unreadable) {
        try enter(UInt8(ascii: "{"))
        first = true
    }

    private var first = true

    /// The next key of the current object as raw bytes, or `nil` at its end.
    mutating func nextKey() throws(Unreadable) -> UnsafeBufferPointer<UInt8>? {
        guard try advance(closing: UInt8(ascii: "}")) else { return nil }
        skipWhitespace()
        let key = try rawStringWithoutEscapes()
        skipWhitespace()
        guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw Unreadable() }
        index += 1
        return key
    }

    mutating func beginArray() throws(Unreadable) {
        try enter(UInt8(ascii: "["))
        first = true
    }

    /// Whether the current array has another element (consuming the comma or the end).
    mutating func nextElement() throws(Unreadable) -> Bool {
        try advance(closing: UInt8(ascii: "]"))
    }

    /// Moves past the comma before the next member, or past the `closing` bracket;
    /// returns whether a member follows.
    private mutating func advance(closing: UInt8) throws(Unreadable) -> Bool {
        skipWhitespace()
        guard index < bytes.count else { throw Unreadable() }
        if bytes[index] == closing {
            index += 1
            depth -= 1
            first = false
            return false
        }
        if !first {
            guard bytes[index] == UInt8(ascii: ",") else { throw Unreadable() }
            index += 1
        }
        first = false
        return true
    }

    /// Requires that nothing but whitespace is left.
    mutating func end() throws(Unreadable) {
        skipWhitespace()
        guard index == bytes.count else { throw Unreadable() }
    }

    private mutating func enter(_ opening: UInt8) throws(Unreadable) {
        skipWhitespace()
        guard index < bytes.count, bytes[index] == opening, depth < Self.maximumDepth else { throw Unreadable() }
        index += 1
        depth += 1
    }

    // MARK: Values

    /// Consumes `null` if it is next.
    mutating func readNull() -> Bool {
        skipWhitespace()
        guard matches("null") else { return false }
        index += 4
        return true
    }

    mutating func readBool() throws(Unreadable) -> Bool {
        skipWhitespace()
        if matches("true") { index += 4; return true }
        if matches("false") { index += 5; return false }
        throw Unreadable()
    }

    mutating func readString() throws(Unreadable) -> String {
        skipWhitespace()
        let span = try scanString()
        if span.hasEscapes { return try readEscapedString(from: span.start) }
        let content = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        // ASCII is valid UTF-8 as it stands; only other bytes need the validating (and
        // slower, generic) initializer.
        if !span.hasNonASCII { return String(decoding: content, as: UTF8.self) }
        guard let string = String(validating: content, as: UTF8.self) else { throw Unreadable() }
        return string
    }

    /// A whole number (no fraction, no exponent) that fits in 64 bits.
    mutating func readInt64() throws(Unreadable) -> Int64 {
        skipWhitespace()
        let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        var magnitude: UInt64 = 0
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { throw Unreadable() }
            magnitude = sum
            index += 1
        }
        // JSON's grammar: digits, no leading zero, nothing of a fraction or exponent after.
        guard index > start, bytes[start] != UInt8(ascii: "0") || index == start + 1 else { throw Unreadable() }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) { throw Unreadable() }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { throw Unreadable() }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        guard magnitude <= UInt64(Int64.max) else { throw Unreadable() }
        return Int64(magnitude)
    }

    mutating func readStringArray() throws(Unreadable) -> [String] {
        try beginArray()
        var strings: [String] = []
        while try nextElement() { strings.append(try readString()) }
        return strings
    }

    /// Skips any value (for keys the models do not have).
    mutating func skipValue() throws(Unreadable) {
        skipWhitespace()
        guard index < bytes.count else { throw Unreadable() }
        switch bytes[index] {
        case UInt8(ascii: "{"):
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case UInt8(ascii: "["):
            try beginArray()
            while try nextElement() { try skipValue() }
        case UInt8(ascii: "\""):
            _ = try readString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            guard readNull() else { throw Unreadable() }
        default:
            try skipNumber()
        }
        first = false
    }

    // MARK: Helpers

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private func matches(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { return false }
        let pointer = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != pointer[offset] { return false }
        return true
    }

    /// Skips a number of JSON's grammar: `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`,
    /// followed by something that cannot continue it.
    private mutating func skipNumber() throws(Unreadable) {
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw Unreadable() }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            guard skipDigits() else { throw Unreadable() }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard skipDigits() else { throw Unreadable() }
        }
        if index < bytes.count, bytes[index] | 0x20 == UInt8(ascii: "e") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard skipDigits() else { throw Unreadable() }
        }
        guard index < bytes.count else { return }
        switch bytes[index] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
            throw Unreadable()
        default:
            return
        }
    }

    /// Skips a run of digits; returns whether there was one.
    private mutating func skipDigits() -> Bool {
        let start = index
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") { index += 1 }
        return index > start
    }

    /// A key: a string without escapes, returned as its bytes.
    private mutating func rawStringWithoutEscapes() throws(Unreadable) -> UnsafeBufferPointer<UInt8> {
        let span = try scanString()
        guard !span.hasEscapes else { throw Unreadable() }
        let key = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        // Keys must be valid UTF-8 too: JSONDecoder rejects a document that is not.
        if span.hasNonASCII, String(validating: key, as: UTF8.self) == nil { throw Unreadable() }
        return key
    }

    /// Finds the string starting at the current quote. Without escapes, consumes it and
    /// returns its content's bounds and whether any byte is not ASCII; at the first
    /// backslash, stops and says so (the caller decodes from `start`).
    private mutating func scanString() throws(Unreadable) -> (start: Int, end: Int, hasEscapes: Bool, hasNonASCII: Bool) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Unreadable() }
        let start = index + 1
        var cursor = start
        var union: UInt8 = 0
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                index = cursor + 1
                return (start, cursor, false, union >= 0x80)
            }
            if byte == UInt8(ascii: "\\") { return (start, cursor, true, union >= 0x80) }
            if byte < 0x20 { throw Unreadable() }
            union |= byte
            cursor += 1
        }
        throw Unreadable()
    }

    /// Decodes the string whose content starts at `start` and holds escapes, and
    /// consumes it.
    ///
    /// Decoded text is never longer than its escaped form, so the string is written in
    /// place into storage of that size: one allocation, none for short strings. Text
    /// with bytes outside ASCII is validated as UTF-8 (JSONDecoder refuses what is not).
    private mutating func readEscapedString(from start: Int) throws(Unreadable) -> String {
        let bytes = self.bytes
        // Find the closing quote, stepping over each escape's next byte.
        var end = start
        var union: UInt8 = 0
        while true {
            guard end < bytes.count else { throw Unreadable() }
            let byte = bytes[end]
            if byte == UInt8(ascii: "\"") { break }
            if byte < 0x20 { throw Unreadable() }
            union |= byte
            end += byte == UInt8(ascii: "\\") ? 2 : 1
        }
        var readable = true
        let string = String(unsafeUninitializedCapacity: end - start) { output in
            let written = Self.unescape(bytes, from: start, to: end, into: output)
            readable = written != nil
            return written ?? 0
        }
        guard readable else { throw Unreadable() }
        if union >= 0x80 {
            // Raw bytes outside ASCII were copied as they came: check them as UTF-8 (the
            // initializer above would have repaired them silently).
            let raw = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard String(validating: raw, as: UTF8.self) != nil else { throw Unreadable() }
        }
        index = end + 1
        return string
    }

    /// Writes the unescaped text of `bytes[start..<end]` into `output`; returns the
    /// number of bytes written, or `nil` if an escape is malformed.
    private static func unescape(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to end: Int, into output: UnsafeMutableBufferPointer<UInt8>
    ) -> Int? {
        var cursor = start
        var count = 0
        while cursor < end {
            let byte = bytes[cursor]
            cursor += 1
            guard byte == UInt8(ascii: "\\") else {
                output[count] = byte
                count += 1
                continue
            }
            guard cursor < end else { return nil }
            let escape = bytes[cursor]
            cursor += 1
            let simple: UInt8
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): simple = escape
            case UInt8(ascii: "b"): simple = 0x08
            case UInt8(ascii: "f"): simple = 0x0C
            case UInt8(ascii: "n"): simple = 0x0A
            case UInt8(ascii: "r"): simple = 0x0D
            case UInt8(ascii: "t"): simple = 0x09
            case UInt8(ascii: "u"):
                guard var scalar = hex4(bytes, &cursor, end: end) else { return nil }
                if (0xD800..<0xDC00).contains(scalar) {
                    guard cursor + 1 < end, bytes[cursor] == UInt8(ascii: "\\"), bytes[cursor + 1] == UInt8(ascii: "u") else { return nil }
                    cursor += 2
                    guard let low = hex4(bytes, &cursor, end: end), (0xDC00..<0xE000).contains(low) else { return nil }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                }
                guard let unicode = Unicode.Scalar(scalar), let encoded = UTF8.encode(unicode) else { return nil }
                for unit in encoded {
                    output[count] = unit
                    count += 1
                }
                continue
            default: return nil
            }
            output[count] = simple
            count += 1
        }
        return count
    }

    /// The four hexadecimal digits at `cursor` (moved past them), or `nil`.
    private static func hex4(_ bytes: UnsafeBufferPointer<UInt8>, _ cursor: inout Int, end: Int) -> UInt32? {
        guard cursor + 4 <= end else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[cursor]
            cursor += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether these bytes spell `literal`.
    func spells(_ literal: StaticString) -> Bool {
        guard count == literal.utf8CodeUnitCount else { return false }
        let pointer = literal.utf8Start
        for offset in 0..<count where self[offset] != pointer[offset] { return false }
        return true
    }
}
