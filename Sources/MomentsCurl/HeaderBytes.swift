/// Reading header fields from the raw bytes of a header line, without making strings.
enum HeaderBytes {
    /// Whether `bytes` spell `lowercase` (ASCII lowercase), ignoring ASCII case.
    static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        var offset = 0
        for byte in bytes {
            // ASCII letters differ from their lowercase form by bit 0x20 alone.
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard folded == expected[offset] else { return false }
            offset += 1
        }
        return true
    }

    /// `bytes` as a non-negative decimal number, as `Int64("…")` reads it (an optional
    /// leading `+`, digits only); `nil` when they are not one or it overflows.
    static func decimal(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int64? {
        var digits = bytes[...]
        if digits.first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty else { return nil }
        var value: Int64 = 0
        for byte in digits {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        return value
    }
}
