/// Batches waiting to be saved, in the order they are to be saved.
///
/// A batch joins the one before it only when neither carries a confirmation interval
/// (storage that keeps none, or answers of unknown age). Otherwise it stays a save of
/// its own: merged, the two would share one interval, the union of theirs (or none, if
/// either had none), and storage that orders writes by their intervals (PostgreSQL,
/// SQLite shared by processes) would judge the newer records by the older answer's
/// start, and refuse them where another instance wrote in between.
struct WriteQueue: Sendable {
    /// The first batch; `nil` when empty (one batch, the common case, needs no array).
    private var head: PersistenceBatch?
    /// The batches after it.
    private var tail: [PersistenceBatch] = []

    init() {}

    init(_ batch: PersistenceBatch) {
        append(batch)
    }

    var isEmpty: Bool { head == nil }

    /// The batches, in order.
    var batches: [PersistenceBatch] {
        guard let head else { return [] }
        return [head] + tail
    }

    /// Adds `batch` after the others (nothing, for an empty batch).
    mutating func append(_ batch: PersistenceBatch) {
        guard !batch.isEmpty else { return }
        guard head != nil else {
            head = batch
            return
        }
        guard batch.confirmedWithin == nil, (tail.last ?? head)?.confirmedWithin == nil else {
            tail.append(batch)
            return
        }
        if tail.isEmpty { head?.merge(batch) } else { tail[tail.count - 1].merge(batch) }
    }

    /// Adds `later`'s batches after these.
    mutating func append(_ later: WriteQueue) {
        guard let first = later.head else { return }
        append(first)
        for batch in later.tail { append(batch) }
    }

    /// Saves the batches in order with `save`, stopping at the first that fails; returns
    /// the outcome and the batches left unsaved (the failed one first).
    nonisolated(nonsending) func save(
        with save: nonisolated(nonsending) (PersistenceBatch) async -> Result<Void, any Error>
    ) async -> (Result<Void, any Error>, unsaved: WriteQueue) {
        guard let head else { return (.success(()), WriteQueue()) }
        let first = await save(head)
        if case .failure = first { return (first, self) }
        for (index, batch) in tail.enumerated() {
            let outcome = await save(batch)
            if case .failure = outcome {
                var unsaved = WriteQueue()
                for left in tail[index...] { unsaved.append(left) }
                return (outcome, unsaved)
            }
        }
        return (.success(()), WriteQueue())
    }
}
