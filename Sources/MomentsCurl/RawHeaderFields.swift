import Foundation
import MomentsHTTP

/// An answer's header fields as they arrived, kept as bytes in one buffer on the event
/// loop's thread (no strings are made there), and made into `HTTPHeaders` by the
/// caller's task, off that thread.
struct RawHeaderFields: Sendable {
    private var bytes: [UInt8] = []
    /// Where each field's name and value end in `bytes`; each name starts where the
    /// field before it ended.
    private var ends: [(name: Int, value: Int)] = []

    /// Forgets every field, keeping the memory.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    mutating func append(name: Slice<UnsafeRawBufferPointer>, value: Slice<UnsafeRawBufferPointer>) {
        if bytes.capacity == 0 {
            bytes.reserveCapacity(512)
            ends.reserveCapacity(12)
        }
        bytes.append(contentsOf: name)
        let nameEnd = bytes.count
        bytes.append(contentsOf: value)
        ends.append((nameEnd, bytes.count))
    }

    /// The fields, in the order they arrived.
    var headers: HTTPHeaders {
        var headers = HTTPHeaders()
        bytes.withUnsafeBufferPointer { buffer in
            var start = 0
            for (nameEnd, valueEnd) in ends {
                headers.add(name: String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<nameEnd]), as: UTF8.self),
                            value: String(decoding: UnsafeBufferPointer(rebasing: buffer[nameEnd..<valueEnd]), as: UTF8.self))
                start = valueEnd
            }
        }
        return headers
    }
}

/// What the event loop hands a caller for a finished transfer: the answer with its
/// header fields still as bytes, made into an `HTTPResponse` on the caller's thread.
struct CurlAnswer: Sendable {
    let statusCode: Int
    let fields: RawHeaderFields
    let body: Data
    let httpVersion: HTTPVersion?
    let bodyFile: URL?

    var response: HTTPResponse {
        HTTPResponse(statusCode: statusCode, headers: fields.headers, body: body, httpVersion: httpVersion, bodyFile: bodyFile)
    }
}
