import Foundation

/// Reading strings.
///
/// A string is found first, eight bytes at a time (``ByteWord``): its closing quote, and
/// whether a backslash, a control character or a byte outside ASCII comes before it, so
/// text costs a few instructions per word, not per byte. Text without escapes becomes a
/// `String` as it stands; text with escapes is decoded in one pass into the scanner's
/// scratch buffer, and the `String` is made from it once.
extension JSONScanner {
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    /// A string's raw content in the input: `bytes[start..<end]`, between its quotes.
    struct RawString {
        let start: Int
        let end: Int
        /// Whether it holds a backslash (an escape).
        let hasEscapes: Bool
        /// Whether a raw byte of it is 0x80 or above (it must then be checked as UTF-8).
        let hasNonASCII: Bool

        var count: Int { end - start }
    }

    mutating func readString() throws(Unreadable) -> String {
        skipWhitespace()
        return try string(scanString())
    }

    /// Reads a string that an answer may repeat many times (a person's name or avatar):
    /// one read before from the same raw bytes is shared, not decoded and allocated again
    /// (see ``RepeatedStrings``).
    mutating func readRepeatedString() throws(Unreadable) -> String {
        guard repeated.isKept else { return try readString() }
        skipWhitespace()
        let raw = try scanString()
        guard raw.count >= RepeatedStrings.minimumLength else { return try string(raw) }
        if let shared = repeated.string(rawStart: raw.start, end: raw.end, in: bytes) { return shared }
        let string = try string(raw)
        repeated.keep(string, rawStart: raw.start, end: raw.end, in: bytes)
        return string
    }

    /// Consumes the string that starts at the current quote and returns its raw content;
    /// a control character in it (JSON requires them escaped), or the input's end before
    /// its closing quote, throws. Its escapes are not checked here: ``string(_:)`` does.
    mutating func scanString() throws(Unreadable) -> RawString {
        guard index < bytes.count, bytes[index] == Self.quote else { throw Unreadable() }
        let raw = try rawString(from: index + 1)
        index = raw.end + 1
        return raw
    }

    /// The text of a string found by ``scanString()``.
    mutating func string(_ raw: RawString) throws(Unreadable) -> String {
        guard raw.hasEscapes else {
            return try Self.string(UnsafeBufferPointer(rebasing: bytes[raw.start..<raw.end]), nonASCII: raw.hasNonASCII)
        }
        return try unescaped(raw)
    }

    /// The raw string whose content starts at `start`, found eight bytes at a time: the
    /// first quote not escaped ends it, and the same words say whether a backslash, a
    /// control character or a byte outside ASCII comes before it (see ``ByteWord``).
    private func rawString(from start: Int) throws(Unreadable) -> RawString {
        guard let base = bytes.baseAddress else { throw Unreadable() }
        let input = UnsafeRawPointer(base)
        var cursor = start
        var backslashes: UInt64 = 0
        var controls: UInt64 = 0
        var seen: UInt64 = 0
        while cursor + 8 <= bytes.count {
            let word = ByteWord.load(input, at: cursor)
            let quotes = ByteWord.bytes(of: word, equalTo: Self.quote)
            // A word without a quote is taken whole, without a mask: folding the two
            // cases into one masked update cost 2.6% more instructions per decode.
            if quotes == 0 {
                backslashes |= ByteWord.bytes(of: word, equalTo: Self.backslash)
                controls |= ByteWord.bytes(of: word, below: 0x20)
                seen |= word
                cursor += 8
                continue
            }
            let offset = ByteWord.firstOffset(quotes)
            let before = ByteWord.mask(before: offset)
            backslashes |= ByteWord.bytes(of: word, equalTo: Self.backslash) & before
            controls |= ByteWord.bytes(of: word, below: 0x20) & before
            seen |= word & before
            let end = cursor + offset
            if backslashes != 0, isEscaped(quoteAt: end, after: start) {
                cursor = end + 1
                continue
            }
            guard controls == 0 else { throw Unreadable() }
            return RawString(start: start, end: end, hasEscapes: backslashes != 0, hasNonASCII: seen & ByteWord.highBits != 0)
        }
        guard controls == 0 else { throw Unreadable() }
        var hasEscapes = backslashes != 0
        var nonASCII = seen & ByteWord.highBits != 0
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == Self.quote, !(hasEscapes && isEscaped(quoteAt: cursor, after: start)) {
                return RawString(start: start, end: cursor, hasEscapes: hasEscapes, hasNonASCII: nonASCII)
            }
            if byte == Self.backslash { hasEscapes = true }
            if byte < 0x20 { throw Unreadable() }
            if byte >= 0x80 { nonASCII = true }
            cursor += 1
        }
        throw Unreadable()
    }

    /// Whether the quote at `quote` is escaped: an odd number of backslashes runs up to
    /// it (`\\"` ends a string, `\"` does not).
    private func isEscaped(quoteAt quote: Int, after start: Int) -> Bool {
        var cursor = quote
        while cursor > start, bytes[cursor - 1] == Self.backslash { cursor -= 1 }
        return (quote - cursor) & 1 == 1
    }

    /// Decodes a string with escapes into the scanner's scratch buffer in one pass, and
    /// makes the `String` from it once. Escapes only shorten text, so the buffer is sized
    /// once, eight bytes over, and each plain run is copied a word at a time while the
    /// same word is searched for the next backslash. Text with bytes outside ASCII is
    /// validated as UTF-8 (JSONDecoder refuses what is not).
    private mutating func unescaped(_ raw: RawString) throws(Unreadable) -> String {
        guard let base = bytes.baseAddress else { throw Unreadable() }
        let input = UnsafeRawPointer(base)
        let output = scratch.storage(forAtLeast: raw.count + 8)
        var written = 0
        var cursor = raw.start
        var nonASCII = raw.hasNonASCII
        while cursor < raw.end {
            // Plain bytes up to the next backslash or the end. `written` never passes
            // `cursor - raw.start`, so each eight-byte store fits.
            if cursor + 8 <= bytes.count {
                let word = ByteWord.load(input, at: cursor)
                UnsafeMutableRawPointer(output + written).storeBytes(of: word.littleEndian, as: UInt64.self)
                let backslashes = ByteWord.bytes(of: word, equalTo: Self.backslash)
                let run = Swift.min(backslashes == 0 ? 8 : ByteWord.firstOffset(backslashes), raw.end - cursor)
                written += run
                cursor += run
                if run == 8 || cursor == raw.end { continue }
            } else if bytes[cursor] != Self.backslash {
                output[written] = bytes[cursor]
                written += 1
                cursor += 1
                continue
            }
            // `bytes[cursor]` is a backslash.
            guard cursor + 1 < raw.end else { throw Unreadable() }
            let escape = bytes[cursor + 1]
            cursor += 2
            let decoded: UInt8
            switch escape {
            case Self.quote, Self.backslash, UInt8(ascii: "/"): decoded = escape
            case UInt8(ascii: "b"): decoded = 0x08
            case UInt8(ascii: "f"): decoded = 0x0C
            case UInt8(ascii: "n"): decoded = 0x0A
            case UInt8(ascii: "r"): decoded = 0x0D
            case UInt8(ascii: "t"): decoded = 0x09
            case UInt8(ascii: "u"):
                let scalar = try unicodeEscape(at: &cursor)
                guard cursor <= raw.end, let encoded = UTF8.encode(scalar) else { throw Unreadable() }
                for unit in encoded {
                    output[written] = unit
                    written += 1
                }
                if scalar.value >= 0x80 { nonASCII = true }
                continue
            default:
                throw Unreadable()
            }
            output[written] = decoded
            written += 1
        }
        // Escapes write valid UTF-8; raw bytes outside ASCII were copied as they came, so
        // the text is checked whole (an escape between them cannot make them valid).
        return try Self.string(UnsafeBufferPointer(start: output, count: written), nonASCII: nonASCII)
    }

    /// `bytes` as a string: ASCII (no byte of 0x80 or above) is valid UTF-8 as it
    /// stands; only other bytes need checking (``validString(_:)``).
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, nonASCII: Bool) throws(Unreadable) -> String {
        if nonASCII { return try validString(bytes) }
        guard bytes.count <= 15, let source = bytes.baseAddress else { return String(decoding: bytes, as: UTF8.self) }
        // Short ASCII fits in the `String` itself: written in place, it is checked for
        // ASCII in a word or two, not decoded.
        return String(unsafeUninitializedCapacity: bytes.count) { target in
            guard let base = target.baseAddress else { return 0 }
            base.initialize(from: source, count: bytes.count)
            return bytes.count
        }
    }

    /// `bytes` as a string, if they are valid UTF-8.
    ///
    /// Decoding repairs invalid bytes (each maximal invalid part becomes U+FFFD), so the
    /// bytes were valid exactly when the decoded string's are the same bytes. This is
    /// `String(validating:as:)`, which is generic and not specialized here, at a
    /// fraction of its cost.
    static func validString(_ bytes: UnsafeBufferPointer<UInt8>) throws(Unreadable) -> String {
        var string = String(decoding: bytes, as: UTF8.self)
        let unchanged = string.withUTF8 { decoded -> Bool in
            guard decoded.count == bytes.count else { return false }
            guard let left = decoded.baseAddress, let right = bytes.baseAddress else { return true }  // both empty
            return memcmp(left, right, bytes.count) == 0
        }
        guard unchanged else { throw Unreadable() }
        return string
    }

    /// The scalar of the `\u` escape whose digits start at `cursor` (a high surrogate
    /// and the `\u` escape of its low one, together); moves past it.
    private func unicodeEscape(at cursor: inout Int) throws(Unreadable) -> Unicode.Scalar {
        var scalar = try hex4(at: &cursor)
        if (0xD800..<0xDC00).contains(scalar) {
            guard cursor + 1 < bytes.count, bytes[cursor] == Self.backslash, bytes[cursor + 1] == UInt8(ascii: "u") else { throw Unreadable() }
            cursor += 2
            let low = try hex4(at: &cursor)
            guard (0xDC00..<0xE000).contains(low) else { throw Unreadable() }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw Unreadable() }
        return unicode
    }

    /// The four hexadecimal digits at `cursor` (moved past them).
    private func hex4(at cursor: inout Int) throws(Unreadable) -> UInt32 {
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
