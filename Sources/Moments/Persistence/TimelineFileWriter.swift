import Foundation
import MomentsSupport

/// Writes a timeline file's JSON without an encoder, a piece at a time: the members
/// `JSONEncoder` writes for ``TimelineFile``, in its order, optionals that are `nil`
/// left out.
///
/// `JSONEncoder` builds a tree of the whole value before writing a byte, then the whole
/// text: two copies of a timeline, and most of a save's time. This writes each moment
/// straight into a buffer that it hands on (``write(_:userID:version:checksum:to:)``'s
/// `sink`) whenever it passes ``flushSize``, so a timeline of any length is written in
/// memory of that size. Strings are written by ``JSONString``.
struct TimelineFileWriter {
    /// The buffer's size at which it is handed on.
    static let flushSize = 256 * 1_024

    private var bytes: [UInt8] = []

    private init() {
        bytes.reserveCapacity(4_096)
    }

    /// Writes the file of `userID`'s timeline `details` to `sink`, in pieces of about
    /// ``flushSize`` bytes (the last one shorter).
    static func write(
        _ details: MomentsDetails, userID: String, version: Int, checksum: Int64?, to sink: (Data) throws -> Void
    ) rethrows {
        var writer = TimelineFileWriter()
        writer.append(#"{"format":"#)
        writer.appendString(TimelineFile.format)
        writer.append(#","version":"#)
        writer.appendInteger(Int64(version))
        writer.append(#","userID":"#)
        writer.appendString(userID)
        writer.append(#","details":{"userDetails":"#)
        writer.append(details.userDetails)
        writer.append(#","moments":["#)
        for (index, moment) in details.moments.enumerated() {
            if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            writer.append(moment)
            if writer.bytes.count >= flushSize { try writer.flush(to: sink) }
        }
        writer.append("]}")
        if let checksum {
            writer.append(#","checksum":"#)
            writer.appendInteger(checksum)
        }
        writer.append("}")
        try writer.flush(to: sink)
    }

    private mutating func flush(to sink: (Data) throws -> Void) rethrows {
        try sink(Data(bytes))
        bytes.removeAll(keepingCapacity: true)
    }

    private mutating func append(_ user: UserDetails) {
        append(#"{"id":"#)
        appendString(user.id)
        append(#","name":"#)
        appendString(user.name)
        append(#","avatar":"#)
        appendString(user.avatar)
        append(#","backgroundImage":"#)
        appendString(user.backgroundImage)
        append("}")
    }

    private mutating func append(_ moment: Moment) {
        append(#"{"id":"#)
        appendString(moment.id)
        append(#","userDetails":{"#)
        let author = moment.userDetails
        if let id = author.id {
            append(#""id":"#)
            appendString(id)
            append(",")
        }
        append(#""name":"#)
        appendString(author.name)
        append(#","avatar":"#)
        appendString(author.avatar)
        append(#"},"type":"#)
        appendString(moment.type.rawValue)
        if let title = moment.title {
            append(#","title":"#)
            appendString(title)
        }
        if let url = moment.url {
            append(#","url":"#)
            appendString(url)
        }
        append(#","photos":["#)
        for (index, photo) in moment.photos.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            appendString(photo)
        }
        append(#"],"createdDate":"#)
        appendString(moment.createdDate)
        if let isLiked = moment.isLiked {
            append(isLiked ? #","isLiked":true"# : #","isLiked":false"#)
        }
        if let likes = moment.likes {
            append(#","likes":["#)
            for (index, liker) in likes.enumerated() {
                append(index > 0 ? #",{"id":"# : #"{"id":"#)
                appendString(liker.id)
                append(#","avatar":"#)
                appendString(liker.avatar)
                append("}")
            }
            append("]")
        }
        append("}")
    }

    /// Appends the bytes of `literal`, with no allocation.
    private mutating func append(_ literal: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
    }

    private mutating func appendInteger(_ value: Int64) {
        bytes.append(contentsOf: String(value).utf8)
    }

    private mutating func appendString(_ value: String) {
        JSONString.appendQuoted(value, to: &bytes)
    }

}
