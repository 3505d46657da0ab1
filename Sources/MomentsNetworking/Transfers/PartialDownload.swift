import Foundation
import MomentsSupport
import MomentsHTTP

/// The file a download is written to before it replaces its destination: beside the
/// destination (so the replacement is one `rename`, on the same file system), hidden,
/// named at random, readable by its owner only.
///
/// The destination is touched once, by ``commit()``, when the answer is accepted; until
/// then, and whenever the download fails (a timeout, a refused call, a failure status,
/// a cut body, a cancellation), it stays as it was and the partial file is removed.
struct PartialDownload: Sendable {
    /// Where the answer goes once accepted.
    let destination: URL
    /// Where the transport writes it meanwhile.
    let partial: URL

    init(replacing destination: URL) {
        self.destination = destination
        let name = ".\(destination.lastPathComponent).\(String(UInt64.random(in: .min ... .max), radix: 16)).part"
        partial = destination.deletingLastPathComponent().appendingPathComponent(name)
    }

    /// Makes the partial file durable and moves it over the destination; returns the
    /// destination.
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` naming the destination when it
    ///   cannot be replaced (the partial file is then removed, the destination left as it was).
    func commit() throws(HTTPClientError) -> URL {
        let descriptor = open(partial.path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)
            close(descriptor)
        }
        guard rename(partial.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            throw .invalidRequest("cannot move the download into \(destination.path): \(reason)")
        }
        return destination
    }

    /// Removes the partial file, if it is still there.
    func discard() {
        unlink(partial.path)
    }
}
