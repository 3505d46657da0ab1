/// Whether the event loop should watch for an event (an answer on the socket, or a
/// caller's next request) for a short window without sleeping, learned from how often
/// watching has caught one.
///
/// Sleeping in `curl_multi_poll` and being woken costs two thread switches, tens of
/// microseconds on a virtual machine: more than a fast server takes to answer, or a
/// sequential caller takes to send again. Watching costs CPU for at most the window.
/// Each watch that catches nothing doubles how many idle moments the loop then sleeps
/// through without watching (up to ``maximumSkips``); one that catches something
/// starts watching every time again. Against a slow server, or a caller that pauses,
/// watching soon stops costing anything.
package struct BriefWatch {
    /// How long one watch lasts; zero never watches.
    package let window: Duration
    /// Idle moments left to sleep through without watching.
    package private(set) var skips = 0
    /// How many idle moments the next miss skips.
    private var penalty = 1

    /// The most idle moments a run of misses skips.
    package static let maximumSkips = 1_024

    package init(window: Duration) {
        self.window = window
    }

    /// Whether to watch at this idle moment (when not, it counts as one skipped).
    package mutating func shouldWatch() -> Bool {
        guard window > .zero else { return false }
        guard skips == 0 else {
            skips -= 1
            return false
        }
        return true
    }

    /// Records what a watch found.
    package mutating func record(caught: Bool) {
        if caught {
            penalty = 1
        } else {
            skips = penalty
            penalty = min(penalty * 2, Self.maximumSkips)
        }
    }

    /// Looks at `event` until it says something happened or the window ends, reading the
    /// clock once every `looksPerClockRead` looks (a cheap look costs less than reading
    /// the clock); whether it happened.
    package func watch(looksPerClockRead: Int = 1, for event: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + window
        repeat {
            for _ in 0..<looksPerClockRead where event() { return true }
        } while ContinuousClock.now < deadline
        return false
    }
}
