/// Why ``MomentsStore`` refused an answer of its service, or a call.
///
/// Nothing of a refused answer is applied, persisted or emitted.
public struct MomentsStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The answer lists one moment id twice.
        public static let duplicateMomentID = Code("duplicate moment id")
        /// The service ended a refresh without any answer.
        public static let noAnswer = Code("no answer")
        /// The store is shutting down or shut down (see ``MomentsStore/shutdown(gracePeriod:)``):
        /// it takes no new call, and a call it could not finish in time persists nothing.
        public static let shutDown = Code("shut down")
        /// The store was configured without likes (``MomentsStore/Configuration/withLikes``
        /// is `false`), so it refuses to like or unlike; nothing was sent.
        public static let likesNotFetched = Code("likes not fetched")

        /// A one-line description, for logs and messages.
        public var description: String { name }
    }

    /// The kind of failure.
    public let code: Code
    /// The user whose timeline the answer was.
    public let userID: String
    /// The moment concerned; empty when none is.
    public let momentID: String

    /// An error of `code` about `userID`'s timeline and, if it concerns one, `momentID`.
    public init(code: Code, userID: String, momentID: String) {
        self.code = code
        self.userID = userID
        self.momentID = momentID
    }

    /// A one-line description, for logs and messages.
    public var description: String {
        switch code {
        case .duplicateMomentID:
            "the service's answer for user \(userID.debugDescription) lists moment \(momentID.debugDescription) twice; it was refused"
        case .noAnswer:
            "the service ended the refresh of user \(userID.debugDescription) without an answer"
        case .shutDown:
            "the store is shut down: it takes no new call, and persists and streams nothing more" + (userID.isEmpty ? "" : " (user \(userID.debugDescription))")
        case .likesNotFetched:
            "the store does not fetch likes (Configuration.withLikes is false), so it cannot like or unlike moment \(momentID.debugDescription) for user \(userID.debugDescription); nothing was sent"
        default:
            "MomentsStoreError.\(code) (user \(userID.debugDescription), moment \(momentID.debugDescription))"
        }
    }
}
