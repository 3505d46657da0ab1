/// A forward-only reader of JSON bytes, for the fast decoding of timelines.
///
/// It understands all of JSON but reports nothing precise: any surprise throws
/// ``JSONScanner/Unreadable`` and the caller falls back to `JSONDecoder`, whose errors
/// are the ones users see.
struct JSONScanner: ~Copyable {
    struct Unreadable: Error {}

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    private var depth = 0
    /// Where strings with escapes are decoded (see `readString()`).
    var scratch = ScratchBuffer()
    /// The strings read through `readRepeatedString()`, to share when they come again.
    var repeated: RepeatedStrings
    private static let maximumDepth = 256

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
        repeated = RepeatedStrings(forInputOf: bytes.count)
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
        let key = try readKey()
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
        try readArray { scanner throws(Unreadable) in try scanner.readString() }
    }

    /// An array, each element read by `element`. A non-empty array starts with room for
    /// a few elements: a short list is then one allocation, not one per size.
    mutating func readArray<Element>(_ element: (inout JSONScanner) throws(Unreadable) -> Element) throws(Unreadable) -> [Element] {
        try beginArray()
        var elements: [Element] = []
        guard try nextElement() else { return elements }
        elements.reserveCapacity(4)
        repeat { elements.append(try element(&self)) } while try nextElement()
        return elements
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

    /// Skips whitespace. Inlined: it runs before every token, and an answer written
    /// without whitespace makes it one comparison.
    @inline(__always)
    mutating func skipWhitespace() {
        guard index < bytes.count, bytes[index] <= 0x20 else { return }
        skipWhitespaceRun()
    }

    private mutating func skipWhitespaceRun() {
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

    /// A key's raw bytes. Keys are short plain ASCII: when sixteen bytes follow the
    /// opening quote, the first two words are searched at once for the closing quote
    /// and for anything else a key may hold (a backslash, a control character, a byte
    /// outside ASCII). A key with anything else, or longer, or near the input's end, is
    /// read by ``rawStringWithoutEscapes()``.
    private mutating func readKey() throws(Unreadable) -> UnsafeBufferPointer<UInt8> {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw Unreadable() }
        let start = index + 1
        if start + 16 <= bytes.count, let base = bytes.baseAddress {
            let input = UnsafeRawPointer(base)
            var offset = start
            var stops = Self.keyStops(ByteWord.load(input, at: offset))
            if stops == 0 {
                offset += 8
                stops = Self.keyStops(ByteWord.load(input, at: offset))
            }
            if stops != 0 {
                let end = offset + ByteWord.firstOffset(stops)
                if bytes[end] == UInt8(ascii: "\"") {
                    index = end + 1
                    return UnsafeBufferPointer(rebasing: bytes[start..<end])
                }
            }
        }
        return try rawStringWithoutEscapes()
    }

    /// Flags the bytes of `word` that end a plain key: a quote, a backslash, a control
    /// character or a byte outside ASCII.
    @inline(__always)
    private static func keyStops(_ word: UInt64) -> UInt64 {
        ByteWord.bytes(of: word, equalTo: UInt8(ascii: "\"")) | ByteWord.bytes(of: word, equalTo: UInt8(ascii: "\\"))
            | ByteWord.bytes(of: word, below: 0x20) | word & ByteWord.highBits
    }

    /// A key: a string without escapes, returned as its bytes.
    private mutating func rawStringWithoutEscapes() throws(Unreadable) -> UnsafeBufferPointer<UInt8> {
        let span = try scanString()
        guard !span.hasEscapes else { throw Unreadable() }
        let key = UnsafeBufferPointer(rebasing: bytes[span.start..<span.end])
        // Keys must be valid UTF-8 too: JSONDecoder rejects a document that is not.
        if span.hasNonASCII { _ = try Self.validString(key) }
        return key
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
