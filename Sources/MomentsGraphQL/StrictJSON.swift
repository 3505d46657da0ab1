package import Foundation

/// RFC 8259's grammar, checked strictly, for answers that are about to be decoded by a
/// parser that is lenient: Foundation's `JSONDecoder` on Linux takes trailing commas,
/// and does not check numbers and strings inside the values it skips.
///
/// A document is valid when it is one value surrounded by whitespace: objects and arrays
/// without trailing or missing commas; strings without raw control characters, with
/// escapes among `\" \\ \/ \b \f \n \r \t \uXXXX`; numbers of the form
/// `-? (0 | [1-9][0-9]*) (.[0-9]+)? ([eE][+-]?[0-9]+)?`; `true`, `false`, `null`; and the
/// whole text valid UTF-8. Nesting is checked with an explicit stack, so any depth is
/// checked without recursion. Duplicate keys are valid JSON and are not refused.
package enum StrictJSON {
    /// Why the document is not JSON, and at which byte.
    package struct Violation: Error, CustomStringConvertible, Equatable {
        package let offset: Int
        package let reason: String
        package var description: String { "\(reason) at byte \(offset)" }
    }

    /// The first violation of the grammar in `data`, or `nil` if it is valid JSON.
    package static func violation(in data: Data) -> Violation? {
        data.withUnsafeBytes { raw -> Violation? in
            var checker = Checker(UnsafeBufferPointer(start: raw.bindMemory(to: UInt8.self).baseAddress, count: raw.count))
            do throws(Violation) {
                try checker.document()
                return nil
            } catch {
                return error
            }
        }
    }

    private struct Checker {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0
        var sawNonASCII = false

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func fail(_ reason: String) -> Violation { Violation(offset: index, reason: reason) }

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func document() throws(Violation) {
            // Each open container: `{` or `[`.
            var stack: [UInt8] = []
            var expectsValue = true
            while true {
                skipWhitespace()
                if expectsValue {
                    guard let byte = current else { throw fail("a value is missing") }
                    switch byte {
                    case UInt8(ascii: "{"):
                        index += 1
                        skipWhitespace()
                        if current == UInt8(ascii: "}") {
                            index += 1
                            expectsValue = false
                            continue
                        }
                        stack.append(byte)
                        try member()
                        continue
                    case UInt8(ascii: "["):
                        index += 1
                        skipWhitespace()
                        if current == UInt8(ascii: "]") {
                            index += 1
                            expectsValue = false
                            continue
                        }
                        stack.append(byte)
                        continue
                    case UInt8(ascii: "\""): try string()
                    case UInt8(ascii: "t"): try literal("true")
                    case UInt8(ascii: "f"): try literal("false")
                    case UInt8(ascii: "n"): try literal("null")
                    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
                    default: throw fail("unexpected byte 0x\(String(byte, radix: 16))")
                    }
                    expectsValue = false
                    continue
                }
                // After a value: the end, a comma, or the end of its container.
                guard let container = stack.last else {
                    guard index == bytes.count else { throw fail("text after the value") }
                    if sawNonASCII, String(validating: bytes, as: UTF8.self) == nil {
                        index = 0
                        throw fail("the text is not valid UTF-8")
                    }
                    return
                }
                guard let byte = current else { throw fail("the document ends inside a container") }
                if byte == UInt8(ascii: ",") {
                    index += 1
                    if container == UInt8(ascii: "{") {
                        skipWhitespace()
                        try member()
                    }
                    expectsValue = true
                } else if byte == (container == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    stack.removeLast()
                } else {
                    throw fail(container == UInt8(ascii: "{") ? "expected , or }" : "expected , or ]")
                }
            }
        }

        /// A key and its colon; the value follows.
        mutating func member() throws(Violation) {
            guard current == UInt8(ascii: "\"") else { throw fail("expected a key") }
            try string()
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { throw fail("expected :") }
            index += 1
        }

        mutating func literal(_ word: StaticString) throws(Violation) {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { throw fail("unknown literal") }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw fail("unknown literal") }
            index += count
        }

        mutating func digits() -> Int {
            let start = index
            while let byte = current, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") { index += 1 }
            return index - start
        }

        mutating func number() throws(Violation) {
            if current == UInt8(ascii: "-") { index += 1 }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                guard digits() > 0 else { throw fail("a number without digits") }
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard digits() > 0 else { throw fail("a fraction without digits") }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard digits() > 0 else { throw fail("an exponent without digits") }
            }
            if let byte = current, (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                throw fail("a malformed number")
            }
        }

        mutating func string() throws(Violation) {
            index += 1  // the opening quote
            while let byte = current {
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    return
                case UInt8(ascii: "\\"):
                    index += 1
                    guard let escaped = current else { throw fail("the text ends inside a string") }
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        index += 1
                        for _ in 0..<4 {
                            guard let hex = current, (hex >= 0x30 && hex <= 0x39) || (hex | 0x20 >= 0x61 && hex | 0x20 <= 0x66) else {
                                throw fail("a \\u escape without four hexadecimal digits")
                            }
                            index += 1
                        }
                    default:
                        throw fail("an invalid escape")
                    }
                case 0..<0x20:
                    throw fail("a control character inside a string")
                default:
                    if byte >= 0x80 { sawNonASCII = true }
                    index += 1
                }
            }
            throw fail("the text ends inside a string")
        }
    }
}
