/// Growable bytes owned by one ``JSONScanner``, reused for every string with escapes it
/// decodes, so decoding one allocates nothing but the `String` itself. Nothing is
/// allocated until the first byte is written: most answers a scanner reads have no
/// escape at all.
///
/// Appending is inlined into the scanner's loop: a check of the room left, then the
/// copy; growing (rare, since the buffer is reused) is out of line.
struct ScratchBuffer: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    private(set) var count = 0

    init() {}

    deinit {
        storage?.deallocate()
    }

    /// The bytes written since the last ``removeAll()``, valid until the next write.
    var contents: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage, count: count)
    }

    mutating func removeAll() {
        count = 0
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        let target = room(for: 1)
        target.pointee = byte
        count += 1
    }

    /// Appends `bytes[range]`.
    @inline(__always)
    mutating func append(_ range: Range<Int>, of bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !range.isEmpty else { return }
        room(for: range.count).update(from: source + range.lowerBound, count: range.count)
        count += range.count
    }

    /// Where the next `extra` bytes go, after growing if they do not fit.
    @inline(__always)
    private mutating func room(for extra: Int) -> UnsafeMutablePointer<UInt8> {
        if let storage, count + extra <= capacity { return storage + count }
        return grow(toFit: extra)
    }

    private mutating func grow(toFit extra: Int) -> UnsafeMutablePointer<UInt8> {
        var newCapacity = Swift.max(capacity, 256)
        while newCapacity < count + extra { newCapacity *= 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        if let storage {
            grown.update(from: storage, count: count)
            storage.deallocate()
        }
        storage = grown
        capacity = newCapacity
        return grown + count
    }
}
