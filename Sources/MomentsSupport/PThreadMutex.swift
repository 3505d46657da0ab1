#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#endif

/// A value threads share behind a `pthread_mutex_t`, with the shape of
/// `Synchronization.Mutex` (`withLock`), and a lock the thread sanitizer sees.
///
/// On Linux, `Mutex` waits on a futex of its own that the sanitizer does not intercept:
/// two accesses under one `Mutex` look unordered to it, so a sanitizer run reports races
/// that are not there, and cannot stop at the first real one. The SDK's locks are this
/// type instead. The value and the mutex live in one allocation, which copies of the
/// struct share.
///
/// Safety of `@unchecked Sendable`: the value is `Sendable` and is reached only inside
/// ``withLock(_:)``, with the mutex held.
///
/// Inlinable, so each use is specialized for its value and body, as `Mutex`'s is.
package struct PThreadMutex<Value: Sendable>: @unchecked Sendable {
    @usableFromInline let storage: PThreadMutexStorage<Value>

    package init(_ initialValue: consuming Value) {
        storage = PThreadMutexStorage.make(initialValue)
    }

    /// Runs `body` with the value, holding the mutex; not reentrant.
    @inlinable
    package func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        try storage.withLock(body)
    }
}

/// The value as the header and the mutex as the one element of a single allocation.
@usableFromInline
final class PThreadMutexStorage<Value>: ManagedBuffer<Value, pthread_mutex_t> {
    /// Moves `value` into the new storage: returned from the header's closure as it is,
    /// it would be copied there and the original destroyed, a retain and a release of
    /// every reference it holds.
    static func make(_ value: consuming Value) -> PThreadMutexStorage<Value> {
        var pending = Optional(consume value)
        let buffer = create(minimumCapacity: 1) { _ in
            // `create` calls this once, so the value is there.
            guard let value = pending.take() else { preconditionFailure("a header is made once") }
            return value
        }
        let storage = unsafeDowncast(buffer, to: PThreadMutexStorage<Value>.self)
        storage.withUnsafeMutablePointerToElements { mutex in
            mutex.initialize(to: pthread_mutex_t())
            _ = pthread_mutex_init(mutex, nil)
        }
        return storage
    }

    @inlinable
    func withLock<Result, E: Error>(_ body: (inout Value) throws(E) -> Result) throws(E) -> Result {
        // The pointers stay valid while `self` lives, which this call keeps it doing.
        let (value, mutex) = withUnsafeMutablePointers { ($0, $1) }
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    deinit {
        _ = withUnsafeMutablePointerToElements { pthread_mutex_destroy($0) }
    }
}
