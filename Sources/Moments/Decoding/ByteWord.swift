/// Eight bytes of input read as one integer, and the tests that find special bytes in
/// them without a loop over the bytes.
///
/// Each test returns flags: the high bit of each byte it picks out. In `x - 0x0101…01`, a
/// byte of `x` that was zero borrows and sets its high bit, which `& ~x` keeps only for
/// bytes whose own high bit was clear. A borrow can flag a byte above a real one, never
/// below, so **the lowest flag is always exact**, and any flag at all means that a real
/// one lies at or below it. Offsets count from the word's first byte in memory (the
/// lowest bits: words are read little-endian).
enum ByteWord {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// The eight bytes at `offset`.
    @inline(__always)
    static func load(_ base: UnsafeRawPointer, at offset: Int) -> UInt64 {
        UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// Flags the bytes of `word` equal to `byte`.
    @inline(__always)
    static func bytes(of word: UInt64, equalTo byte: UInt8) -> UInt64 {
        let difference = word ^ (ones &* UInt64(byte))
        return (difference &- ones) & ~difference & highBits
    }

    /// Flags the bytes of `word` below `limit` (at most 0x80).
    @inline(__always)
    static func bytes(of word: UInt64, below limit: UInt8) -> UInt64 {
        (word &- ones &* UInt64(limit)) & ~word & highBits
    }

    /// The offset of the byte of the lowest flag.
    @inline(__always)
    static func firstOffset(_ flags: UInt64) -> Int {
        flags.trailingZeroBitCount &>> 3
    }

    /// The bits of the first `count` bytes (0 to 7) of a word.
    @inline(__always)
    static func mask(before count: Int) -> UInt64 {
        (1 &<< UInt64(count &* 8)) &- 1
    }
}
