import Foundation

/// Where and why a response body failed to decode.
public struct DecodingFailure: Sendable, Hashable, CustomStringConvertible {
    /// The type that was being decoded, e.g. `MomentsDetails`.
    public let typeName: String
    /// The path to the failing value, e.g. `data.getMomentsDetailsByUserID.moments[2].type`.
    public let codingPath: String
    /// What the decoder said.
    public let detail: String
    /// The first bytes of the body, as text.
    public let bodyExcerpt: String

    /// A failure to decode `typeName` at `codingPath`, as `detail` says, with the body's first bytes.
    package init(typeName: String, codingPath: String, detail: String, bodyExcerpt: String) {
        self.typeName = typeName
        self.codingPath = codingPath
        self.detail = detail
        self.bodyExcerpt = bodyExcerpt
    }

    init(type: Any.Type, error: any Error, body: Data) {
        let (path, detail) = Self.describe(error)
        self.init(
            typeName: String(describing: type),
            codingPath: path,
            detail: detail,
            bodyExcerpt: BodyExcerpt.make(body, limit: 256)
        )
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        var text = "could not decode \(typeName)"
        if !codingPath.isEmpty { text += " at \(codingPath)" }
        text += ": \(detail)"
        if !bodyExcerpt.isEmpty { text += " — body: \(bodyExcerpt)" }
        return text
    }

    /// Renders a coding path as `a.b[3].c`.
    package static func render(_ path: [any CodingKey]) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
            }
        }
        return text
    }

    private static func describe(_ error: any Error) -> (path: String, detail: String) {
        guard let error = error as? DecodingError else {
            return ("", String(describing: error))
        }
        switch error {
        case .typeMismatch(let type, let context):
            return (render(context.codingPath), "expected \(type): \(context.debugDescription)")
        case .valueNotFound(let type, let context):
            return (render(context.codingPath), "missing value of type \(type): \(context.debugDescription)")
        case .keyNotFound(let key, let context):
            return (render(context.codingPath + [key]), "missing key '\(key.stringValue)'")
        case .dataCorrupted(let context):
            var detail = context.debugDescription
            if let underlying = context.underlyingError { detail += " (\(underlying))" }
            return (render(context.codingPath), detail)
        @unknown default:
            return ("", String(describing: error))
        }
    }
}
