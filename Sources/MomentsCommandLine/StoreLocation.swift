import Foundation
import Moments
import MomentsSQLite

/// Where the CLI keeps timelines: `sqlite:PATH`, `json:DIR` or `memory`.
enum StoreLocation: Equatable {
    case sqlite(String)
    case json(String)
    case memory

    static let `default` = StoreLocation.sqlite("moments.sqlite")

    static func parse(_ text: String) throws(UsageError) -> StoreLocation {
        if text == "memory" { return .memory }
        if text.hasPrefix("sqlite:"), text.count > 7 { return .sqlite(String(text.dropFirst(7))) }
        if text.hasPrefix("json:"), text.count > 5 { return .json(String(text.dropFirst(5))) }
        throw UsageError(message: "--store must be sqlite:PATH, json:DIR or memory, not '\(text)'")
    }

    func open() throws -> any MomentsPersistence {
        switch self {
        case .sqlite(let path): try SQLitePersistence(path: path)
        case .json(let directory): try JSONFilePersistence(directory: URL(fileURLWithPath: directory))
        case .memory: InMemoryPersistence()
        }
    }
}
