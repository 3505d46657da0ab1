import Foundation

/// The strings of one answer that repeat, shared instead of decoded again.
///
/// A timeline names the same few people again and again: who wrote each moment, who
/// liked it. Each of their avatar URLs is longer than the 15 bytes a `String` holds
/// without allocating, and encoders that escape slashes (`JSONEncoder` does) write it
/// with an escape for each one. Read through this table, a string whose raw JSON bytes
/// equal those of one read before is that string again: decoding depends on the raw
/// bytes alone.
///
/// The table's size is fixed by the input's: none below 4 KiB (an answer of a few
/// moments repeats too little to repay a table), 16 entries below 8 KiB, 32 below 64 KiB
/// (tables under the kilobyte from which the allocator tidies its free lists first), 512
/// above, where the answer is long enough to repay it. An entry is chosen by a hash of
/// the raw bytes (their length and their first and last eight bytes); it keeps where
/// its raw bytes lie in the input, which outlives the table, and the string they
/// decoded to. A hit is confirmed by comparing the bytes whole; a miss takes the entry
/// over. An answer that repeats nothing therefore costs a hash and a comparison per
/// string, and the table never grows.
struct RepeatedStrings: ~Copyable {
    /// The shortest raw string worth sharing: shorter ones are read into a small `String`
    /// without an allocation, and the hash reads eight bytes at each end.
    static let minimumLength = 16

    /// The number of entries, a power of two.
    private let size: Int

    /// A string and where its raw bytes lie; a `count` of 0 marks an empty entry.
    private struct Entry {
        var start: UInt32 = 0
        var count: UInt32 = 0
        var string = ""
    }

    /// Allocated at the first string kept.
    private var entries: UnsafeMutablePointer<Entry>?

    /// Whether strings are kept at all (not for short inputs): if not, a string is
    /// better read as any other.
    var isKept: Bool { size > 0 }

    /// A table for an input of `count` bytes (none for short inputs, nor past 4 GiB:
    /// offsets are kept in 32 bits).
    init(forInputOf count: Int) {
        size = switch count {
        case ..<4_096: 0
        case ..<8_192: 16
        case ..<65_536: 32
        case ...Int(UInt32.max): 512
        default: 0
        }
    }

    deinit {
        guard let entries else { return }
        entries.deinitialize(count: size)
        entries.deallocate()
    }

    /// The string read before from the same raw bytes as `bytes[start..<end]`, if the
    /// table still holds it. The span is at least ``minimumLength`` bytes long.
    func string(rawStart start: Int, end: Int, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard let entries, let base = bytes.baseAddress else { return nil }
        let count = end - start
        let entry = entries + slot(start: start, count: count, base: base)
        guard Int(entry.pointee.count) == count, memcmp(base + Int(entry.pointee.start), base + start, count) == 0 else { return nil }
        return entry.pointee.string
    }

    /// Keeps `string`, decoded from `bytes[start..<end]` (at least ``minimumLength`` bytes),
    /// in place of the entry its hash picks.
    mutating func keep(_ string: String, rawStart start: Int, end: Int, in bytes: UnsafeBufferPointer<UInt8>) {
        guard size > 0, let base = bytes.baseAddress else { return }
        let table: UnsafeMutablePointer<Entry>
        if let entries {
            table = entries
        } else {
            table = UnsafeMutablePointer<Entry>.allocate(capacity: size)
            table.initialize(repeating: Entry(), count: size)
            entries = table
        }
        let count = end - start
        table[slot(start: start, count: count, base: base)] = Entry(start: UInt32(truncatingIfNeeded: start), count: UInt32(truncatingIfNeeded: count), string: string)
    }

    /// The entry for `count` raw bytes at `start`: a hash of the count and of the first
    /// and last eight bytes, which differ between the URLs of different people.
    private func slot(start: Int, count: Int, base: UnsafePointer<UInt8>) -> Int {
        let raw = UnsafeRawPointer(base)
        let first = raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)
        let last = raw.loadUnaligned(fromByteOffset: start + count - 8, as: UInt64.self)
        var hash = (first &* 0x9E37_79B9_7F4A_7C15) ^ (last &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(truncatingIfNeeded: count)
        hash ^= hash >> 31
        hash = hash &* 0xBF58_476D_1CE4_E5B9
        hash ^= hash >> 29
        return Int(truncatingIfNeeded: hash & UInt64(size - 1))
    }
}
