public import Foundation
package import MomentsHTTP

/// A `multipart/form-data` form (RFC 7578): text fields, and files streamed from disk as
/// the form is sent, never read whole. Send it with ``RequestBody/multipart(_:)``.
///
/// For example:
/// ```swift
/// var form = MultipartForm()
/// form.addField("caption", "Tokyo at night")
/// form.addFile("photo", at: URL(fileURLWithPath: "/tmp/night.jpg"), contentType: "image/jpeg")
/// var body: RequestBody? { .multipart(form) }
/// ```
///
/// Each part carries `Content-Disposition: form-data; name="…"` (and `filename="…"` for
/// files), and its `Content-Type` when it has one. In names and file names, `"` is sent
/// as `%22` and line breaks as `%0D`/`%0A`, as browsers send them.
public struct MultipartForm: Sendable, Hashable {
    /// One part of the form.
    public struct Part: Sendable, Hashable {
        /// What a part holds.
        public enum Content: Sendable, Hashable {
            /// Bytes in memory.
            case bytes(Data)
            /// A file, read from disk as the form is sent.
            case file(URL)
        }

        /// The field's name.
        public var name: String
        /// The file name announced to the server (`filename="…"`); `nil` for a plain field.
        public var fileName: String?
        /// The part's `Content-Type`; `nil` sends none (text fields).
        public var contentType: String?
        /// The part's bytes or file.
        public var content: Content

        /// A part named `name` holding `content`.
        public init(name: String, fileName: String? = nil, contentType: String? = nil, content: Content) {
            self.name = name
            self.fileName = fileName
            self.contentType = contentType
            self.content = content
        }
    }

    /// The parts, in the order they are sent.
    public var parts: [Part]
    /// The line between parts. The default is `moments-` and a random UUID: a value no
    /// content is likely to hold.
    public var boundary: String

    /// An empty form with a random boundary.
    public init(parts: [Part] = [], boundary: String = "moments-" + UUID().uuidString) {
        self.parts = parts
        self.boundary = boundary
    }

    /// Adds a text field.
    public mutating func addField(_ name: String, _ value: String) {
        parts.append(Part(name: name, content: .bytes(Data(value.utf8))))
    }

    /// Adds a file, streamed from `url` when the form is sent. The file name sent is
    /// `fileName`, or the file's own name.
    public mutating func addFile(_ name: String, at url: URL, fileName: String? = nil, contentType: String = "application/octet-stream") {
        parts.append(Part(name: name, fileName: fileName ?? url.lastPathComponent, contentType: contentType, content: .file(url)))
    }

    /// Adds bytes sent as a file named `fileName`.
    public mutating func addData(_ name: String, _ data: Data, fileName: String, contentType: String = "application/octet-stream") {
        parts.append(Part(name: name, fileName: fileName, contentType: contentType, content: .bytes(data)))
    }

    /// The `Content-Type` of the whole form, with its boundary.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// The form as the bytes and files it is sent as, each file's length taken now.
    ///
    /// - Throws: `HTTPClientError.Code.invalidRequest` when a file cannot
    ///   be read, or the boundary is not a valid one (1 to 70 characters of RFC 2046's set).
    package func streamedBody() throws -> StreamedBody {
        guard Self.isValidBoundary(boundary) else {
            throw HTTPClientError.invalidRequest("the multipart boundary \(boundary.debugDescription) is not 1 to 70 of RFC 2046's characters")
        }
        var segments: [StreamedBody.Segment] = []
        var pending = Data()
        for part in parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(Self.escaped(part.name))\""
            if let fileName = part.fileName { head += "; filename=\"\(Self.escaped(fileName))\"" }
            head += "\r\n"
            if let contentType = part.contentType { head += "Content-Type: \(contentType.filter { !$0.isNewline })\r\n" }
            head += "\r\n"
            pending.append(Data(head.utf8))
            switch part.content {
            case .bytes(let data):
                pending.append(data)
            case .file(let url):
                if !pending.isEmpty { segments.append(.bytes(pending)) }
                pending = Data()
                segments.append(try StreamedBody.file(url))
            }
            pending.append(Data("\r\n".utf8))
        }
        pending.append(Data("--\(boundary)--\r\n".utf8))
        segments.append(.bytes(pending))
        return StreamedBody(segments)
    }

    /// `text` as a quoted parameter value: `"`, CR and LF percent-encoded.
    static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// RFC 2046: 1 to 70 characters of `bchars`, not ending in a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ")
        return (1...70).contains(boundary.count) && boundary.allSatisfy(allowed.contains) && boundary.last != " "
    }
}
