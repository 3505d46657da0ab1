/// One entry of the `errors` list of a GraphQL response.
public struct GraphQLError: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A position in the GraphQL document.
    public struct Location: Sendable, Hashable, Codable {
        /// The line, from 1.
        public let line: Int
        /// The column, from 1.
        public let column: Int

        /// A location at `line` and `column`.
        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// One step of the path to the field that failed: a field name or a list index.
    public enum PathElement: Sendable, Hashable, Codable, CustomStringConvertible {
        case field(String)
        case index(Int)

        /// Decodes the value from its JSON form.
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let index = try? container.decode(Int.self) {
                self = .index(index)
            } else {
                self = .field(try container.decode(String.self))
            }
        }

        /// Encodes the value in its JSON form.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .field(let name): try container.encode(name)
            case .index(let index): try container.encode(index)
            }
        }

        /// A one-line description, for logs and messages.
        public var description: String {
            switch self {
            case .field(let name): name
            case .index(let index): String(index)
            }
        }
    }

    /// What went wrong, as the server put it.
    public let message: String
    /// Where in the document it went wrong.
    public let locations: [Location]?
    /// The path to the response field that failed, if the error is tied to one.
    public let path: [PathElement]?

    /// An error saying `message`, at `locations` of the document, for the field at `path`.
    public init(message: String, locations: [Location]? = nil, path: [PathElement]? = nil) {
        self.message = message
        self.locations = locations
        self.path = path
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        guard let path, !path.isEmpty else { return message }
        return "\(message) (at \(path.map(\.description).joined(separator: ".")))"
    }
}
