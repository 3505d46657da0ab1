@testable import MomentsNetworking
import Testing

/// ``InFlightRequests``: what a client's `cancelAll`, latest-wins and shutdown reach.
@Suite struct InFlightRequestsTests {
    /// Once a shutdown has begun, a request is refused in the same step that would
    /// register it: it is not counted, and nothing can cancel it later.
    @Test func aRequestIsRefusedOnceAShutdownHasBegun() async {
        let requests = InFlightRequests()
        let before = CallTask()
        let id = requests.register(before, latestWinsKey: nil)
        #expect(id != nil)
        #expect(await requests.beginClosing())
        let after = CallTask()
        #expect(requests.register(after, latestWinsKey: "timeline", groups: ["screen"]) == nil)
        #expect(requests.count == 1)
        #expect(requests.count(in: "screen") == 0)
        requests.cancelAll()
        #expect(before.isCancelled)
        #expect(!after.isCancelled)
    }

    /// A request with the key of one in flight cancels that one's task, and only that
    /// one; `cancelAll(in:)` reaches the members of its group alone.
    @Test func latestWinsAndGroupsCancelTheTasksTheyName() {
        let requests = InFlightRequests()
        let first = CallTask(), other = CallTask(), second = CallTask()
        _ = requests.register(first, latestWinsKey: "timeline")
        _ = requests.register(other, latestWinsKey: nil, groups: ["screen"])
        #expect(!first.isCancelled)
        _ = requests.register(second, latestWinsKey: "timeline")
        #expect(first.isCancelled)
        #expect(!second.isCancelled && !other.isCancelled)
        requests.cancelAll(in: "screen")
        #expect(other.isCancelled)
        #expect(!second.isCancelled)
    }
}
