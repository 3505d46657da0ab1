/// The stream of one subscriber of the store's streams (`updates(for:)` and
/// `changes()`): an `AsyncStream` over `next`, whose subscriber is let go (`end`) when
/// `next` says the stream is over, when the consuming task is cancelled, and when the
/// stream is dropped without being iterated to its end. `end` may be called more than
/// once.
final class StreamSubscription<Value: Sendable>: Sendable {
    private let produce: @Sendable () async -> Value?
    private let end: @Sendable () -> Void

    private init(next: @escaping @Sendable () async -> Value?, end: @escaping @Sendable () -> Void) {
        self.produce = next
        self.end = end
    }

    /// A stream of what `next` returns until it returns `nil`; `end` lets the subscriber go.
    static func stream(next: @escaping @Sendable () async -> Value?, end: @escaping @Sendable () -> Void) -> AsyncStream<Value> {
        let subscription = StreamSubscription(next: next, end: end)
        // Cancellation while waiting reaches `end` through `onCancel`.
        return AsyncStream(unfolding: { await subscription.next() }, onCancel: { subscription.end() })
    }

    private func next() async -> Value? {
        let value = await produce()
        if value == nil { end() }
        return value
    }

    deinit { end() }
}
