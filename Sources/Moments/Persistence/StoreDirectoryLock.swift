import Foundation
import MomentsSupport

/// The lock that keeps a store's directory to one process at a time: an exclusive
/// `flock` on a lock file in the directory, held from opening until closing.
///
/// The kernel releases it when the holding process ends, however it ends, so a crashed
/// process never leaves the directory locked. Instances in one process share one lock
/// (reopening a directory while an older instance is still alive is the caller's
/// choice); the lock is released when the last of them is closed or deallocated.
final class StoreDirectoryLock: Sendable {
    /// The lock file's name inside the directory.
    static let fileName = ".moments.lock"

    /// The lock file.
    let path: String
    private let released = PThreadMutex(false)

    private struct Held: Sendable {
        var descriptor: Int32
        var holders: Int
    }

    /// How long a waiting opening sleeps between tries.
    private static let pause = Duration.milliseconds(5)

    /// Locks held by this process, by lock file.
    private static let held = PThreadMutex<[String: Held]>([:])

    private init(path: String) {
        self.path = path
    }

    /// Takes the lock of `directory`, waiting up to `timeout` for another process to
    /// release it.
    ///
    /// - Throws: ``PersistenceError`` with `.locked` if another process held it all that
    ///   time; `.ioFailure` if the lock file cannot be opened or locked.
    static func acquire(directory: URL, waitingUpTo timeout: Duration) throws -> StoreDirectoryLock {
        let path = directory.appendingPathComponent(fileName).path
        try held.withLock { held in
            if var mine = held[path] {
                mine.holders += 1
                held[path] = mine
                return
            }
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else {
                throw PersistenceError(code: .ioFailure, location: path, reason: "the store's lock file cannot be opened: \(String(cString: strerror(errno)))")
            }
            // Tried every 5 ms, so the wait lasts at least `timeout` (longer on a busy
            // machine) without reading a clock.
            var attemptsLeft = Int(max(0, min(timeout / pause, 1e12)))
            while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
                let failure = errno
                if failure == EINTR { continue }
                guard failure == EWOULDBLOCK else {
                    close(descriptor)
                    throw PersistenceError(code: .ioFailure, location: path, reason: "the store's lock file cannot be locked: \(String(cString: strerror(failure)))")
                }
                guard attemptsLeft > 0 else {
                    close(descriptor)
                    throw PersistenceError(
                        code: .locked, location: path,
                        reason: "another process has the store open (it holds the lock file); one process at a time may use a JSON-file store: to share one, use SQLite or PostgreSQL persistence"
                    )
                }
                attemptsLeft -= 1
                usleep(UInt32(pause / .microseconds(1)))
            }
            held[path] = Held(descriptor: descriptor, holders: 1)
        }
        return StoreDirectoryLock(path: path)
    }

    /// Gives this instance's hold up; the last to do so unlocks the directory. Calling
    /// it again does nothing.
    func release() {
        let first = released.withLock { released in
            defer { released = true }
            return !released
        }
        guard first else { return }
        Self.held.withLock { held in
            guard var mine = held[path] else { return }
            mine.holders -= 1
            if mine.holders == 0 {
                held[path] = nil
                close(mine.descriptor)  // releases the flock
            } else {
                held[path] = mine
            }
        }
    }

    deinit {
        release()
    }
}
