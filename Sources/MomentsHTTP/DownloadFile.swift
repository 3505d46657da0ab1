package import Foundation
import MomentsSupport

/// The file a download's body goes into: the rules of ``HTTPTransport``'s downloads in
/// one place, for the transports that write a body as it arrives and for `HTTPClient`,
/// which writes the body of a transport that answered in memory.
///
/// The file is created readable and writable by its owner only (0600), or truncated and
/// made so if it exists; every byte is written or the write fails; a download that does not
/// succeed is removed. It is used by one thread at a time, and ``finish(succeeded:)``
/// must be called exactly once.
package struct DownloadFile {
    /// Where the body goes.
    package let url: URL
    private let descriptor: Int32

    /// Creates (or truncates) the file at `url`.
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` naming the file and the reason,
    ///   if it cannot be opened for writing.
    package init(creating url: URL) throws(HTTPClientError) {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .invalidRequest("cannot write the download to \(url.path): \(String(cString: strerror(errno)))")
        }
        // A file that was there keeps its mode through `open`: an answer that may be
        // authenticated is the owner's alone whatever the file was before.
        guard fchmod(descriptor, 0o600) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .invalidRequest("cannot make the download \(url.path) its owner's only: \(reason)")
        }
        self.url = url
        self.descriptor = descriptor
    }

    /// Appends `bytes`, all of them.
    ///
    /// - Throws: `HTTPClientError.Code.transportFailure` naming the file and the reason
    ///   (a full disk, say); the caller then ends the exchange.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(HTTPClientError) {
        do throws(AtomicFile.Failure) {
            try AtomicFile.writeAll(bytes, to: descriptor)
        } catch {
            throw .transportFailure(TransportFailure(kind: .other, message: "cannot write the download to \(url.path): \(error.reason)"))
        }
    }

    /// Closes the file, and removes it unless the download `succeeded`.
    package func finish(succeeded: Bool) {
        close(descriptor)
        if !succeeded { try? FileManager.default.removeItem(at: url) }
    }

    /// Writes `body` whole into a new file at `url`: the download of an answer that
    /// arrived in memory (an empty body makes an empty file). A file that cannot be
    /// written whole is removed.
    package static func write(_ body: Data, to url: URL) throws(HTTPClientError) {
        let file = try DownloadFile(creating: url)
        let failure: HTTPClientError? = body.withUnsafeBytes { bytes in
            do throws(HTTPClientError) {
                try file.write(bytes)
                return nil
            } catch {
                return error
            }
        }
        file.finish(succeeded: failure == nil)
        if let failure { throw failure }
    }
}
