import Foundation
import MomentsSupport

/// The memory of large answer bodies, kept for reuse once callers release them.
///
/// A large body is gathered in a buffer from here and handed to the caller as `Data`
/// that returns the buffer when the last copy of it is released. Without reuse, every
/// large answer is fresh memory from the system (the allocator maps it and unmaps it
/// again when freed), and the page faults that touch it cost more than the copy that
/// fills it. Only what a caller has released is reused; a buffer's earlier content is
/// never visible (a body exposes exactly the bytes written for it), and each transport
/// has its own pool.
final class BodyMemoryPool: Sendable {
    /// Bodies at least this long (announced, or grown to it) use pooled memory.
    static let minimumBufferSize = 64 << 10

    /// Idle bytes kept at most; buffers released beyond it are freed.
    let idleLimit: Int
    private let idle = PThreadMutex<[Buffer]>([])

    struct Buffer: @unchecked Sendable {
        // Safety of `@unchecked Sendable`: a buffer has one owner at a time: the pool's
        // idle list (behind its mutex), one transfer (on the loop's thread), or the
        // `Data` handed out (which returns it exactly once, from its deallocator).
        let pointer: UnsafeMutableRawPointer
        let capacity: Int
    }

    /// The bytes held idle now.
    var idleBytes: Int { idle.withLock { $0.reduce(0) { $0 + $1.capacity } } }

    init(idleLimit: Int) {
        self.idleLimit = max(0, idleLimit)
    }

    deinit {
        for buffer in idle.withLock({ $0 }) { free(buffer.pointer) }
    }

    /// A buffer of at least `capacity` bytes: an idle one if one is large enough, else
    /// new memory, its size rounded up to a power of two so that answers of similar
    /// sizes share buffers. When no idle buffer fits, the smallest idle one is freed, so
    /// buffers too small for today's answers do not hold the pool's room. `nil` if the
    /// system has no memory.
    func take(capacity: Int) -> Buffer? {
        let (reused, dropped) = idle.withLock { idle -> (Buffer?, Buffer?) in
            if let index = idle.firstIndex(where: { $0.capacity >= capacity }) { return (idle.remove(at: index), nil) }
            guard let smallest = idle.indices.min(by: { idle[$0].capacity < idle[$1].capacity }) else { return (nil, nil) }
            return (nil, idle.remove(at: smallest))
        }
        if let dropped { free(dropped.pointer) }
        if let reused { return reused }
        guard capacity <= 1 << 48 else { return nil }
        let rounded = capacity <= 1 ? 1 : 1 << (Int.bitWidth - (capacity - 1).leadingZeroBitCount)
        return malloc(rounded).map { Buffer(pointer: $0, capacity: rounded) }
    }

    /// Takes `buffer` back for reuse, or frees it if the pool holds enough.
    func recycle(_ buffer: Buffer) {
        let kept = idle.withLock { idle -> Bool in
            let held = idle.reduce(0) { $0 + $1.capacity }
            guard held + buffer.capacity <= idleLimit else { return false }
            idle.append(buffer)
            return true
        }
        if !kept { free(buffer.pointer) }
    }

    /// `count` bytes of `buffer` as `Data` that gives the buffer back when released.
    func data(_ buffer: Buffer, count: Int) -> Data {
        Data(bytesNoCopy: buffer.pointer, count: count, deallocator: .custom { [self] _, _ in recycle(buffer) })
    }
}

/// A body being gathered: in `Data` while it is small, in pooled memory once it is
/// announced or grown large (loop-confined, like the transfer that owns it).
struct BodyAccumulator {
    private var small = Data()
    private var large: BodyMemoryPool.Buffer?
    private var count = 0
    private let pool: BodyMemoryPool?

    init(pool: BodyMemoryPool?) {
        self.pool = pool
    }

    /// Prepares room for `length` bytes, announced by the answer.
    mutating func reserve(_ length: Int) {
        if length >= BodyMemoryPool.minimumBufferSize, pool != nil, grow(to: length) { return }
        small.reserveCapacity(length)
    }

    /// Appends `bytes`; `false` if memory ran out.
    mutating func append(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        let needed = count + bytes.count
        if pool != nil {
            if let buffer = large {
                if needed > buffer.capacity, !grow(to: max(2 * buffer.capacity, needed)) { return false }
            } else if needed >= BodyMemoryPool.minimumBufferSize {
                if !grow(to: max(2 * needed, BodyMemoryPool.minimumBufferSize)) { return false }
            }
        }
        if let buffer = large {
            (buffer.pointer + count).copyMemory(from: base, byteCount: bytes.count)
        } else {
            small.append(base.assumingMemoryBound(to: UInt8.self), count: bytes.count)
        }
        count = needed
        return true
    }

    /// Moves what is gathered into a pooled buffer of at least `capacity` bytes.
    private mutating func grow(to capacity: Int) -> Bool {
        guard let pool, let buffer = pool.take(capacity: capacity) else { return false }
        if let old = large {
            buffer.pointer.copyMemory(from: old.pointer, byteCount: count)
            pool.recycle(old)
        } else if count > 0 {
            small.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { buffer.pointer.copyMemory(from: base, byteCount: count) }
            }
            small = Data()
        }
        large = buffer
        return true
    }

    /// The body gathered, leaving the accumulator empty.
    mutating func take() -> Data {
        defer { self = BodyAccumulator(pool: pool) }
        guard let large, let pool else { return small }
        return pool.data(large, count: count)
    }

    /// Gives any pooled buffer back (the body is not wanted).
    mutating func discard() {
        if let large, let pool { pool.recycle(large) }
        self = BodyAccumulator(pool: pool)
    }
}
