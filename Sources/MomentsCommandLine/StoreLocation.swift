import Foundation
import Moments
#if Postgres
import MomentsPostgres
#endif
import MomentsSQLite

/// Where the CLI keeps timelines: `sqlite:PATH`, `json:DIR`, `postgres:CONNECTION` or
/// `memory`.
enum StoreLocation: Equatable {
    case sqlite(String)
    case json(String)
    /// A PostgreSQL database shared with other instances: libpq's connection string
    /// (`postgres:host=… dbname=…`, or a `postgresql://` URL given whole).
    case postgres(String)
    case memory

    static let `default` = StoreLocation.sqlite("moments.sqlite")

    static func parse(_ text: String) throws(UsageError) -> StoreLocation {
        if text == "memory" { return .memory }
        if text.hasPrefix("sqlite:"), text.count > 7 { return .sqlite(String(text.dropFirst(7))) }
        if text.hasPrefix("json:"), text.count > 5 { return .json(String(text.dropFirst(5))) }
        // libpq's URLs are taken whole; otherwise what follows `postgres:` is the string.
        if text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") { return .postgres(text) }
        if text.hasPrefix("postgres:"), text.count > 9 { return .postgres(String(text.dropFirst(9))) }
        throw UsageError(message: "--store must be sqlite:PATH, json:DIR, postgres:CONNECTION or memory, not '\(Self.redacted(text))'")
    }

    /// `text` with any password in it hidden, for messages.
    private static func redacted(_ text: String) -> String {
        text.replacingOccurrences(of: #"password\s*=\s*\S+"#, with: "password=…", options: .regularExpression)
            .replacingOccurrences(of: #"(://[^:/@]*):[^@/]*@"#, with: "$1:…@", options: .regularExpression)
    }

    /// The files this location would create that do not exist yet: removed again if
    /// the command fails, so a failing command leaves nothing behind.
    var filesNotYetCreated: [String] {
        let candidates: [String]
        switch self {
        case .sqlite(let path): candidates = [path, path + "-wal", path + "-shm"]
        case .json(let directory): candidates = [directory]
        case .postgres, .memory: candidates = []
        }
        return candidates.filter { !FileManager.default.fileExists(atPath: $0) }
    }

    /// The persistence, and the change bus a store on it listens to (PostgreSQL and
    /// SQLite: other processes' changes arrive through it).
    func open() async throws -> (persistence: any MomentsPersistence, changeBus: (any MomentsChangeBus)?) {
        switch self {
        case .sqlite(let path):
            let persistence = try await SQLitePersistence.open(path: path)
            return (persistence, persistence)
        case .json(let directory):
            return (try await JSONFilePersistence.open(directory: URL(fileURLWithPath: directory)), nil)
        case .postgres(let connection):
            #if Postgres
            let persistence = try await PostgresPersistence(connectionString: connection)
            return (persistence, persistence)
            #else
            _ = connection
            throw UsageError(message: "this moments was built without PostgreSQL stores (the Postgres trait); build it with its default traits")
            #endif
        case .memory:
            return (InMemoryPersistence(), nil)
        }
    }
}
