public import Foundation

/// The lines a child process writes to a pipe, as they come, read on a thread of its
/// own so a test can wait for the child's progress without blocking Swift's threads.
public final class LineReader: Sendable {
    /// The lines, ending when the pipe closes.
    public let lines: AsyncStream<String>

    public init(_ handle: FileHandle) {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        lines = stream
        let thread = Thread {
            var buffer = Data()
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            if !buffer.isEmpty { continuation.yield(String(decoding: buffer, as: UTF8.self)) }
            continuation.finish()
        }
        thread.start()
    }
}
