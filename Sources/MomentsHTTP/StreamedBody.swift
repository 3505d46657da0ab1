public import Foundation

/// A request body read piece by piece while it is sent: bytes held in memory and files
/// read from disk as the transport asks for them, never whole. A file upload or a
/// `multipart/form-data` form (`RequestBody.file(_:contentType:)`,
/// `RequestBody.multipart(_:)`) travels as one.
///
/// Each file's length is taken when the body is made; a file whose length changes
/// before it is sent fails the request with
/// ``HTTPClientError/Code-swift.struct/invalidRequest`` rather than sending a body of
/// another length than announced.
///
/// A transport reads it with a ``Reader`` (as many times as it needs to start again,
/// for a retry or a redirect).
public struct StreamedBody: Sendable, Hashable {
    /// One piece of the body.
    package enum Segment: Sendable, Hashable {
        /// Bytes in memory.
        case bytes(Data)
        /// A file, read from disk as it is sent, of the length it had when the body was made.
        case file(URL, length: Int64)

        /// The segment's length in bytes.
        package var length: Int64 {
            switch self {
            case .bytes(let data): Int64(data.count)
            case .file(_, let length): length
            }
        }
    }

    /// The pieces, in order.
    package let segments: [Segment]
    /// The whole body's length in bytes (what `Content-Length` announces).
    public let length: Int64

    /// A body of `segments`, in order.
    package init(_ segments: [Segment]) {
        self.segments = segments
        length = segments.reduce(0) { $0 + $1.length }
    }

    /// A segment for the file at `url`, with its length now.
    ///
    /// - Throws: ``HTTPClientError/Code-swift.struct/invalidRequest`` when it is not a
    ///   readable regular file.
    package static func file(_ url: URL) throws -> Segment {
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            throw HTTPClientError.invalidRequest("cannot send the file \(url.path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw HTTPClientError.invalidRequest("cannot send \(url.path): it is not a regular file")
        }
        guard access(url.path, R_OK) == 0 else {
            throw HTTPClientError.invalidRequest("cannot send the file \(url.path): it cannot be read")
        }
        return .file(url, length: Int64(status.st_size))
    }

    /// The whole body in memory (for tests and small bodies; transports stream it with
    /// a ``Reader``).
    public func collected() throws -> Data {
        var data = Data()
        data.reserveCapacity(Int(clamping: length))
        let reader = Reader(self)
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = try buffer.withUnsafeMutableBytes { try reader.read(into: $0) }
            if count == 0 { return data }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// Reads a ``StreamedBody`` in order, opening each file as its turn comes and
    /// closing it at its end. One reader serves one thread at a time.
    public final class Reader {
        private let body: StreamedBody
        private var segmentIndex = 0
        private var offsetInSegment: Int64 = 0
        private var descriptor: Int32 = -1

        /// A reader at the start of `body`.
        public init(_ body: StreamedBody) {
            self.body = body
        }

        deinit {
            closeFile()
        }

        /// How many bytes have been read since the start.
        public private(set) var position: Int64 = 0

        /// Fills `buffer` with the next bytes; returns how many, 0 at the end.
        ///
        /// - Throws: ``HTTPClientError/Code-swift.struct/invalidRequest`` when a file
        ///   cannot be read, or ends before (or goes on after) the length it had when the
        ///   body was made.
        public func read(into buffer: UnsafeMutableRawBufferPointer) throws -> Int {
            var filled = 0
            while filled < buffer.count, segmentIndex < body.segments.count {
                let segment = body.segments[segmentIndex]
                let remaining = segment.length - offsetInSegment
                if remaining <= 0 {
                    try endSegment(segment)
                    continue
                }
                let wanted = Int(min(Int64(buffer.count - filled), remaining))
                let target = UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<(filled + wanted)])
                let count: Int
                switch segment {
                case .bytes(let data):
                    let start = Int(offsetInSegment)
                    data.copyBytes(to: target, from: data.startIndex + start..<data.startIndex + start + wanted)
                    count = wanted
                case .file(let url, _):
                    count = try readFile(url, into: target)
                }
                filled += count
                offsetInSegment += Int64(count)
                position += Int64(count)
            }
            return filled
        }

        /// Goes back to byte `offset` of the body (0 to start again).
        ///
        /// - Throws: ``HTTPClientError/Code-swift.struct/invalidRequest`` when `offset`
        ///   lies outside the body.
        public func seek(to offset: Int64) throws {
            guard offset >= 0, offset <= body.length else {
                throw HTTPClientError.invalidRequest("cannot seek to byte \(offset) of a \(body.length)-byte body")
            }
            closeFile()
            var start: Int64 = 0
            var index = 0
            while index < body.segments.count, offset >= start + body.segments[index].length {
                start += body.segments[index].length
                index += 1
            }
            segmentIndex = index
            offsetInSegment = offset - start
            position = offset
        }

        private func readFile(_ url: URL, into target: UnsafeMutableRawBufferPointer) throws -> Int {
            if descriptor < 0 {
                descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else {
                    throw HTTPClientError.invalidRequest("cannot read the file \(url.path): \(String(cString: strerror(errno)))")
                }
            }
            while true {
                let count = pread(descriptor, target.baseAddress, target.count, off_t(offsetInSegment))
                if count > 0 { return count }
                if count == 0 {
                    throw HTTPClientError.invalidRequest("the file \(url.path) became shorter while it was sent")
                }
                if errno != EINTR {
                    throw HTTPClientError.invalidRequest("cannot read the file \(url.path): \(String(cString: strerror(errno)))")
                }
            }
        }

        private func endSegment(_ segment: Segment) throws {
            if case .file(let url, let length) = segment, descriptor >= 0 {
                var status = stat()
                if fstat(descriptor, &status) == 0, Int64(status.st_size) != length {
                    throw HTTPClientError.invalidRequest("the file \(url.path) changed length while it was sent")
                }
            }
            closeFile()
            segmentIndex += 1
            offsetInSegment = 0
        }

        private func closeFile() {
            if descriptor >= 0 { close(descriptor) }
            descriptor = -1
        }
    }
}
