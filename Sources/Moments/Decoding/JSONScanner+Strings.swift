import Foundation

/// Reading strings.
///
/// Plain text runs until a quote, a backslash or a control character; the scanner finds
/// the first of them eight bytes at a time (``firstSpecialByte(in:from:nonASCII:)``), so
/// text costs a few instructions per word, not per byte. A string with escapes is decoded
/// in one pass into the scanner's scratch buffer, plain runs copied whole, and the
/// `String` is made from it once.
extension JSONScanner {
    private static let quote = UInt8(ascii: "\"")
    private static let backslash = UInt8(ascii: "\\")

    mutating func readString() throws(Unreadable) -> String {
        skipWhitespace()
        let span = try scanString()
        if span.hasEscapes { return try readEscapedString(from: span.start, firstEscape: span.end, nonASCII: span.hasNonASCII) }
        return try Self.string(UnsafeBufferPointer(rebasing: bytes[span.start..<span.end]), nonASCII: span.hasNonASCII)
    }

    /// Reads a string that an answer may repeat many times (a person's name or avatar):
    /// one read before from the same raw bytes is shared, not decoded and allocated again
    /// (see ``RepeatedStrings``).
    mutating func readRepeatedString() throws(Unreadable) -> String {
        guard repeated.isKept else { return try readString() }
        skipWhitespace()
        guard index < bytes.count, bytes[index] == Self.quote else { throw Unreadable() }
        let start = index + 1
        let (end, firstEscape, nonASCII) = try Self.bounds(ofStringFrom: start, in: bytes)
        let isShared = end - start >= RepeatedStrings.minimumLength
        if isShared, let shared = repeated.string(rawStart: start, end: end, in: bytes) {
            index = end + 1
            return shared
        }
        // Read from the bounds found (a string with escapes, from its first one on).
        let string: String
        if firstEscape < end {
            string = try readEscapedString(from: start, firstEscape: firstEscape, nonASCII: nonASCII)
        } else {
            index = end + 1
            string = try Self.string(UnsafeBufferPointer(rebasing: bytes[start..<end]), nonASCII: nonASCII)
        }
        if isShared { repeated.keep(string, rawStart: start, end: end, in: bytes) }
        return string
    }

    /// The bounds of the string whose content starts at `start`: the offset of its
    /// closing quote, of its first backslash (the closing quote's, if none), and whether
    /// a byte of it is 0x80 or above. Each escaped byte is passed over; a control
    /// character or the input's end throws.
    private static func bounds(ofStringFrom start: Int, in bytes: UnsafeBufferPointer<UInt8>) throws(Unreadable) -> (end: Int, firstEscape: Int, nonASCII: Bool) {
        var cursor = start
        var nonASCII = false
        var firstEscape: Int?
        while true {
            cursor = firstSpecialByte(in: bytes, from: cursor, nonASCII: &nonASCII)
            guard cursor < bytes.count else { throw Unreadable() }
            switch bytes[cursor] {
            case Self.quote: return (cursor, firstEscape ?? cursor, nonASCII)
            case Self.backslash:
                if firstEscape == nil { firstEscape = cursor }
                cursor += 2
            default: throw Unreadable()
            }
        }
    }

    /// Finds the string starting at the current quote. Without escapes, consumes it and
    /// returns its content's bounds and whether any byte is not ASCII; at the first
    /// backslash, stops and says so (`end` is the backslash's offset). A control
    /// character, which JSON requires escaped, or the input's end, throws.
    mutating func scanString() throws(Unreadable) -> (start: Int, end: Int, hasEscapes: Bool, hasNonASCII: Bool) {
        guard index < bytes.count, bytes[index] == Self.quote else { throw Unreadable() }
        let start = index + 1
        var nonASCII = false
        let stop = Self.firstSpecialByte(in: bytes, from: start, nonASCII: &nonASCII)
        guard stop < bytes.count else { throw Unreadable() }
        switch bytes[stop] {
        case Self.quote:
            index = stop + 1
            return (start, stop, false, nonASCII)
        case Self.backslash:
            return (start, stop, true, nonASCII)
        default:
            throw Unreadable()
        }
    }

    /// The offset of the first quote, backslash or control character (below 0x20) in
    /// `bytes` at or after `start`, or `bytes.count` if there is none; sets `nonASCII` if
    /// a byte passed over is 0x80 or above.
    ///
    /// Eight bytes at a time: in `word - 0x0101…01`, a byte that was zero borrows and
    /// sets its high bit, which `& ~word` keeps only for bytes whose own high bit was
    /// clear. Applied to the word XORed with a quote, with a backslash, and (subtracting
    /// 0x20 instead) to the word itself, it flags those bytes. A borrow can flag a byte
    /// above a real one, never below, so the lowest flag is always a real one.
    static func firstSpecialByte(in bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCII: inout Bool) -> Int {
        var cursor = start
        guard let base = bytes.baseAddress else { return bytes.count }
        let raw = UnsafeRawPointer(base)
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highBits: UInt64 = 0x8080_8080_8080_8080
        var seen: UInt64 = 0
        while cursor + 8 <= bytes.count {
            let word = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: cursor, as: UInt64.self))
            let quotes = word ^ (ones &* UInt64(quote))
            let backslashes = word ^ (ones &* UInt64(backslash))
            let flags = ((quotes &- ones) & ~quotes | (backslashes &- ones) & ~backslashes | (word &- ones &* 0x20) & ~word) & highBits
            if flags != 0 {
                let offset = flags.trailingZeroBitCount / 8
                if offset > 0 { seen |= word & (UInt64.max >> (64 - 8 * offset)) }
                if seen & highBits != 0 { nonASCII = true }
                return cursor + offset
            }
            seen |= word
            cursor += 8
        }
        if seen & highBits != 0 { nonASCII = true }
        while cursor < bytes.count {
            let byte = bytes[cursor]
            if byte == quote || byte == backslash || byte < 0x20 { return cursor }
            if byte >= 0x80 { nonASCII = true }
            cursor += 1
        }
        return cursor
    }

    /// Decodes the string whose content starts at `start` and whose first escape is at
    /// `firstEscape`, and consumes it. Text with bytes outside ASCII is validated as
    /// UTF-8 (JSONDecoder refuses what is not).
    private mutating func readEscapedString(from start: Int, firstEscape: Int, nonASCII: Bool) throws(Unreadable) -> String {
        var nonASCII = nonASCII
        scratch.removeAll()
        scratch.append(start..<firstEscape, of: bytes)
        var cursor = firstEscape
        while true {
            // `bytes[cursor]` is a backslash.
            guard cursor + 1 < bytes.count else { throw Unreadable() }
            let escape = bytes[cursor + 1]
            cursor += 2
            switch escape {
            case Self.quote, Self.backslash, UInt8(ascii: "/"): scratch.append(escape)
            case UInt8(ascii: "b"): scratch.append(0x08)
            case UInt8(ascii: "f"): scratch.append(0x0C)
            case UInt8(ascii: "n"): scratch.append(0x0A)
            case UInt8(ascii: "r"): scratch.append(0x0D)
            case UInt8(ascii: "t"): scratch.append(0x09)
            case UInt8(ascii: "u"):
                let scalar = try unicodeEscape(at: &cursor)
                guard let encoded = UTF8.encode(scalar) else { throw Unreadable() }
                for unit in encoded { scratch.append(unit) }
                if scalar.value >= 0x80 { nonASCII = true }
            default:
                throw Unreadable()
            }
            let stop = Self.firstSpecialByte(in: bytes, from: cursor, nonASCII: &nonASCII)
            guard stop < bytes.count else { throw Unreadable() }
            scratch.append(cursor..<stop, of: bytes)
            cursor = stop
            if bytes[stop] == Self.quote { break }
            guard bytes[stop] == Self.backslash else { throw Unreadable() }
        }
        index = cursor + 1
        // Escapes write valid UTF-8; raw bytes outside ASCII were copied as they came, so
        // the text is checked whole (an escape between them cannot make them valid).
        return try Self.string(scratch.contents, nonASCII: nonASCII)
    }

    /// `bytes` as a string: ASCII (no byte of 0x80 or above) is valid UTF-8 as it
    /// stands; only other bytes need checking (``validString(_:)``).
    private static func string(_ bytes: UnsafeBufferPointer<UInt8>, nonASCII: Bool) throws(Unreadable) -> String {
        nonASCII ? try validString(bytes) : String(decoding: bytes, as: UTF8.self)
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
