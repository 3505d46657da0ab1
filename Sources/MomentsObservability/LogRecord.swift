import Foundation

/// One log record from the SDK, handed to the ``LogHandler`` the user sets.
///
/// Records never contain tokens or credential header values.
public struct LogRecord: Sendable, CustomStringConvertible {
    /// How much a record matters.
    public enum Level: Int, Sendable, Comparable, CustomStringConvertible {
        case debug, info, warning, error

        /// Whether the first orders before the second.
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }

        /// A one-line description, for logs and messages.
        public var description: String {
            switch self {
            case .debug: "debug"
            case .info: "info"
            case .warning: "warning"
            case .error: "error"
            }
        }
    }

    /// How much the record matters.
    public let level: Level
    /// What happened, in one line.
    public let message: String
    /// Structured details, e.g. `["method": "POST", "status": "200"]`.
    public let metadata: [String: String]

    /// A record at `level` saying `message`, with `metadata`.
    public init(level: Level, message: String, metadata: [String: String] = [:]) {
        self.level = level
        self.message = message
        self.metadata = metadata
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        let details = metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        return "[\(level)] \(message)" + (details.isEmpty ? "" : " \(details)")
    }
}

/// Receives the SDK's log records. Nothing is logged unless one is set.
///
/// ```swift
/// configuration.logHandler = { record in
///     FileHandle.standardError.write(Data("\(record)\n".utf8))
/// }
/// ```
public typealias LogHandler = @Sendable (LogRecord) -> Void

extension LogRecord {
    /// A ready-made ``LogHandler`` for local debugging: one block per record on
    /// standard error, the metadata one field per line (with `logLevel = .debug`, the
    /// compact, redacted request and response bodies).
    ///
    /// ```swift
    /// configuration.logLevel = .debug
    /// configuration.logHandler = LogRecord.standardErrorHandler
    /// ```
    public static let standardErrorHandler: LogHandler = { record in
        var lines = ["[\(record.level)] \(record.message)"]
        for (key, value) in record.metadata.sorted(by: { $0.key < $1.key }) { lines.append("    \(key): \(value)") }
        FileHandle.standardError.write(Data((lines.joined(separator: "\n") + "\n").utf8))
    }
}
