/// A 64-bit FNV-1a checksum of stored content, to detect damage that leaves the data
/// well-formed (a flipped byte inside a text value).
///
/// Every step of FNV-1a is a bijection of its state for a given byte, so any change of
/// a single byte always changes the checksum. Fields are fed with their length first,
/// so moving a byte from one field to the next changes it too.
package struct Checksum: Sendable {
    private(set) package var value: UInt64 = 0xcbf2_9ce4_8422_2325

    package init() {}

    package mutating func add(_ bytes: some Sequence<UInt8>) {
        for byte in bytes {
            value ^= UInt64(byte)
            value = value &* 0x0000_0100_0000_01b3
        }
    }

    package mutating func add(_ text: String) {
        var text = text
        add(UInt64(text.utf8.count))
        text.withUTF8 { add($0) }
    }

    package mutating func add(_ text: String?) {
        guard let text else { return add(UInt8(0)) }
        add(UInt8(1))
        add(text)
    }

    package mutating func add(_ number: UInt64) {
        withUnsafeBytes(of: number.littleEndian) { add($0) }
    }

    package mutating func add(_ byte: UInt8) {
        add(CollectionOfOne(byte))
    }

    /// The checksum as a signed integer, the type SQLite stores.
    package var signedValue: Int64 { Int64(bitPattern: value) }
}
