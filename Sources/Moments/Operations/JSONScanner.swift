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
        guard let string = String(validating: UnsafeBufferPointer(rebasing: bytes[span.start..<span.end]), as: UTF8.self) else {
            throw Unreadable()
        }
        return string
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

    private mutating func skipNumber() throws(Unreadable) {
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                index += 1
            default:
                guard index > start else { throw Unreadable() }
                return
            }
        }
        guard index > start else { throw Unreadable() }
    }

    /// A key: a string without escapes, returned as its bytes.
    private mutating func rawStringWithoutEscapes() throws(Unreadable) -> UnsafeBufferPointer<UInt8> {
        let span = try scanString()
        guard !span.hasEscapes else { throw Unreadable() }
        let key = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        // Keys must be valid UTF-8 too: JSONDecoder rejects a document that is not.
        if key.contains(where: { $0 >= 0x80 }), String(validating: key, as: UTF8.self) == nil { throw Unreadable() }
        return key
    }

    /// Finds the string starting at the current quote. Without escapes, consumes it and
    /// returns its content's bounds; at the first backslash, stops and says so (the
    /// caller decodes from `start`).
    private mutating func scanString() throws(Unreadable) -> (start: Int, end: Int, hasEscapes: Bool) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Unreadable() }
        let start = index + 1
        var cursor = start
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == UInt8(ascii: "\"") {
                index = cursor + 1
                return (start, cursor, false)
            }
            if byte == UInt8(ascii: "\\") { return (start, cursor, true) }
            if byte < 0x20 { throw Unreadable() }
            cursor += 1
        }
        throw Unreadable()
    }

    private mutating func readEscapedString(from start: Int) throws(Unreadable) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(64)
        var cursor = start
        while cursor < bytes.count {
            // Copy the run up to the next quote, backslash or control byte in one go.
            var runEnd = cursor
            while runEnd < bytes.count, bytes[runEnd] >= 0x20, bytes[runEnd] != UInt8(ascii: "\""), bytes[runEnd] != UInt8(ascii: "\\") {
                runEnd += 1
            }
            if runEnd > cursor {
                utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[cursor..<runEnd]))
                cursor = runEnd
                continue
            }
            let byte = bytes[cursor]
            cursor += 1
            switch byte {
            case UInt8(ascii: "\""):
                index = cursor
                guard let string = String(validating: utf8, as: UTF8.self) else { throw Unreadable() }
                return string
            case UInt8(ascii: "\\"):
                guard cursor < bytes.count else { throw Unreadable() }
                let escape = bytes[cursor]
                cursor += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4(&cursor)
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard cursor + 1 < bytes.count, bytes[cursor] == UInt8(ascii: "\\"), bytes[cursor + 1] == UInt8(ascii: "u") else { throw Unreadable() }
                        cursor += 2
                        let low = try hex4(&cursor)
                        guard (0xDC00..<0xE000).contains(low) else { throw Unreadable() }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw Unreadable() }
                    utf8.append(contentsOf: String(Character(unicode)).utf8)
                default: throw Unreadable()
                }
            default:
                if byte < 0x20 { throw Unreadable() }
                utf8.append(byte)
            }
        }
        throw Unreadable()
    }

    private func hex4(_ cursor: inout Int) throws(Unreadable) -> UInt32 {
        guard cursor + 4 <= bytes.count else { throw Unreadable() }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[cursor]
            cursor += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw Unreadable()
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
