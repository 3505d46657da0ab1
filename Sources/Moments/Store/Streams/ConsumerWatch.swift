import MomentsSupport

/// When a mailbox's consumer watches for its next value before it parks, decided from
/// how its waits ended (the mailbox measures them; this value reads no clock).
///
/// The rules:
/// - A consumer watches only after a wait that ended within the window: a new consumer,
///   and one whose values come seldom, parks at once and costs nothing.
/// - A watch that catches nothing makes the consumer skip twice as many chances to
///   watch as the miss before it did (up to ``BriefWatch/maximumSkips``); one that
///   catches makes it watch every time again.
/// - A zero window never watches.
struct ConsumerWatch {
    private var policy: BriefWatch
    private var lastWaitWasShort = false

    init(window: Duration) {
        policy = BriefWatch(window: window)
    }

    /// How long one watch lasts.
    var window: Duration { policy.window }

    /// Whether the wait beginning now watches first.
    mutating func beginWait() -> Bool {
        lastWaitWasShort && policy.shouldWatch()
    }

    /// Records what the watch of the current wait found.
    mutating func watchEnded(caught: Bool) {
        policy.record(caught: caught)
    }

    /// Records that the current wait ended with a value `length` after it began.
    mutating func waitEnded(after length: Duration) {
        lastWaitWasShort = length <= policy.window
    }

    /// Looks at `event` until it says a value came or the window ends; whether it came.
    func watch(for event: () -> Bool) -> Bool {
        // An atomic load costs far less than reading the clock.
        policy.watch(looksPerClockRead: 16, for: event)
    }
}
