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

    /// The files this location would create that do not exist yet: removed again if
    /// the command fails, so a failing command leaves nothing behind.
    var filesNotYetCreated: [String] {
        let candidates: [String]
        switch self {
        case .sqlite(let path): candidates = [path, path + "-wal", path + "-shm"]
        case .json(let directory): candidates = [directory]
        case .memory: candidates = []
        }
        return candidates.filter { !FileManager.default.fileExists(atPath: $0) }
    }

    func open() throws -> any MomentsPersistence {
        switch self {
        case .sqlite(let path): try SQLitePersistence(path: path)
        case .json(let directory): try JSONFilePersistence(directory: URL(fileURLWithPath: directory))
        case .memory: InMemoryPersistence()
        }
    }
}
