/// Suspends until the calling task is cancelled: a stalled server attempt, with no
/// length of time to guess.
public func waitUntilCancelled() async {
    let (stream, continuation) = AsyncStream<Never>.makeStream()
    await withTaskCancellationHandler {
        for await _ in stream {}
    } onCancel: {
        continuation.finish()
    }
}
