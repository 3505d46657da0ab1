/// Waits for `event`, an event the code under test reports; returns whether it came.
///
/// It returns as soon as the event comes, however busy the machine: `limit` only turns
/// a hang into a failure (a test waiting for something a regression stops from
/// happening fails instead of stopping the suite), and is generous for that reason.
/// A wait that outlives `limit` is left behind, still waiting.
public func withFailsafe(_ limit: Duration = .seconds(300), _ event: @escaping @Sendable () async -> Void) async -> Bool {
    let (outcomes, outcome) = AsyncStream<Bool>.makeStream(bufferingPolicy: .bufferingNewest(2))
    let waiter = Task {
        await event()
        outcome.yield(true)
    }
    let timer = Task {
        try? await Task.sleep(for: limit)
        outcome.yield(false)
    }
    var first = outcomes.makeAsyncIterator()
    let came = await first.next() ?? false
    timer.cancel()
    if !came { waiter.cancel() }
    outcome.finish()
    return came
}
