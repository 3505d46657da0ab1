/// Something a store did that tests and simulations wait for or count, through
/// ``MomentsStore/Configuration-swift.struct/observer``.
package enum StoreEvent: Sendable, Equatable {
    /// An event of the change bus has been applied.
    case sharedEventApplied
    /// A refetch to settle answers of unknown order failed, leaving `userID`'s timeline to
    /// the next refresh.
    case refetchToSettleFailed(userID: String)
}
