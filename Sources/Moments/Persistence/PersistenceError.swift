/// Why a ``MomentsPersistence`` could not load or save.
///
/// It names the file or database and the cause; it never contains saved values.
public struct PersistenceError: Error, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The stored data is not what was written: garbage, truncated, or of another format.
        public static let corruptedData = Code("corrupted data")
        /// The data was written by a newer version of this SDK.
        public static let unsupportedVersion = Code("unsupported version")
        /// The file system refused: no space, no permission, an I/O error.
        public static let ioFailure = Code("I/O failure")
        /// The database engine reported an error.
        public static let databaseFailure = Code("database failure")
        /// What was to be saved is not a valid timeline: a moment id listed twice, or a
        /// moment listed that is stored nowhere. Nothing was written.
        public static let invalidInput = Code("invalid input")
        /// The database server could not be reached: refused, unresolvable, timed out,
        /// or it refused TLS.
        public static let connectionFailed = Code("connection failed")
        /// The database server refused the credentials.
        public static let authenticationFailed = Code("authentication failed")
        /// The connection to the database server was lost during the operation (after
        /// one retry where retrying was safe); whether a write committed is unknown.
        public static let connectionLost = Code("connection lost")
        /// The persistence was closed (``MomentsPersistence/close()``): it reads and
        /// writes nothing more.
        public static let closed = Code("closed")
        /// Another process has the store open, and it stayed so for as long as the
        /// opening waited: a store that one process at a time may use (JSON files)
        /// refuses a second instead of letting their writes undo each other's.
        public static let locked = Code("locked")

        /// A one-line description, for logs and messages.
        public var description: String { name }
    }

    /// The kind of failure.
    public let code: Code
    /// The file, directory or database concerned.
    public let location: String
    /// The user whose timeline was concerned, if one was.
    public let userID: String?
    /// What went wrong.
    public let reason: String
    /// The error underneath, such as a `DecodingError` or an `SQLiteError`.
    public let underlyingError: (any Error)?

    /// An error of `code` at `location` (a file, directory or database), for `userID`
    /// if it concerns one user.
    public init(code: Code, location: String, userID: String? = nil, reason: String, underlyingError: (any Error)? = nil) {
        self.code = code
        self.location = location
        self.userID = userID
        self.reason = reason
        self.underlyingError = underlyingError
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        var text = "PersistenceError.\(code) at \(location)"
        if let userID { text += " (user \(userID.debugDescription))" }
        return text + ": \(reason)"
    }
}

extension PersistenceError {
    package static func duplicateMoment(_ momentID: String, location: String, userID: String) -> PersistenceError {
        PersistenceError(code: .invalidInput, location: location, userID: userID,
                         reason: "the timeline lists moment \(momentID.debugDescription) twice; nothing was saved")
    }

    package static func missingMoment(_ momentID: String, location: String, userID: String) -> PersistenceError {
        PersistenceError(code: .invalidInput, location: location, userID: userID,
                         reason: "the timeline lists moment \(momentID.debugDescription), which is stored nowhere; nothing was saved")
    }
}
