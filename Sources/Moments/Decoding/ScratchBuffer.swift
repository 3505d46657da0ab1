/// Bytes owned by one ``JSONScanner``, reused for every string with escapes it decodes,
/// so decoding one allocates nothing but the `String` itself. Nothing is allocated until
/// a string needs it: most answers a scanner reads have no escape at all.
struct ScratchBuffer: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>?
    private var capacity = 0

    init() {}

    deinit {
        storage?.deallocate()
    }

    /// Room for at least `count` bytes, valid until the next call; what it held before
    /// is not kept.
    @inline(__always)
    mutating func storage(forAtLeast count: Int) -> UnsafeMutablePointer<UInt8> {
        if let storage, count <= capacity { return storage }
        return grow(toFit: count)
    }

    private mutating func grow(toFit count: Int) -> UnsafeMutablePointer<UInt8> {
        var newCapacity = Swift.max(capacity, 256)
        while newCapacity < count { newCapacity *= 2 }
        storage?.deallocate()
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        storage = grown
        capacity = newCapacity
        return grown
    }
}
