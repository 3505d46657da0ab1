import Foundation

/// The parts of a GraphQL request's JSON body (`query`, `operationName`, `variables`)
/// that ``InMemoryBFF`` and ``FaultInjectingTransport/operation(_:)`` read.
struct GraphQLRequestBody {
    var query: String
    var operationName: String?
    var variables: [String: Any]

    /// The body's fields, or `nil` when it is not a JSON object with a `query` string.
    init?(_ body: Data?) {
        guard let body, let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
              let query = object["query"] as? String else { return nil }
        self.query = query
        operationName = object["operationName"] as? String
        variables = object["variables"] as? [String: Any] ?? [:]
    }

    /// The operation the document runs: its `operationName`, or the first root field the
    /// document names.
    var operation: String? {
        if let operationName { return operationName }
        for name in ["updateMomentLike", "getMomentsDetailsByUserID"] where query.contains(name) { return name }
        return nil
    }

    func string(_ name: String) -> String? {
        switch variables[name] {
        case let value as String: value
        case let value as Int: String(value)
        default: nil
        }
    }

    func bool(_ name: String) -> Bool? { variables[name] as? Bool }
}
