import Foundation

/// When and how often a failed request is sent again.
///
/// Retries transport failures and the statuses in ``retryableStatusCodes``, with
/// exponential backoff and jitter, honouring `Retry-After` (seconds or an HTTP date).
/// Only requests whose ``RequestOptions/allowsRetry`` is true are retried: idempotent methods
/// and GraphQL queries by default. Cancellation stops a pending retry at once.
///
/// For example:
/// ```swift
/// configuration.retryPolicy = RetryPolicy(maximumAttempts: 4, initialDelay: .milliseconds(100))
/// ```
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included. The default is 3.
    public var maximumAttempts: Int
    /// The delay before the first retry; each later one doubles it. The default is 200 ms.
    public var initialDelay: Duration
    /// No single delay is longer. The default is 10 seconds.
    public var maximumDelay: Duration
    /// The delays together never exceed this; a retry that would is not made.
    /// The default is 30 seconds.
    public var maximumTotalDelay: Duration
    /// The fraction of each delay that is random, from 0 (none) to 1. The default is 0.5.
    public var jitter: Double
    /// Statuses that are retried. The default is 408, 429, 500, 502, 503 and 504.
    public var retryableStatusCodes: Set<Int>
    /// How the policy waits; `nil` waits on the client's ``HTTPClient/Configuration-swift.struct/clock``.
    /// The default is `nil`.
    public var sleep: (@Sendable (Duration) async throws -> Void)?

    /// A policy; every default is stated on its property.
    public init(
        maximumAttempts: Int = 3,
        initialDelay: Duration = .milliseconds(200),
        maximumDelay: Duration = .seconds(10),
        maximumTotalDelay: Duration = .seconds(30),
        jitter: Double = 0.5,
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        sleep: (@Sendable (Duration) async throws -> Void)? = nil
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.maximumTotalDelay = maximumTotalDelay
        self.jitter = min(1, max(0, jitter))
        self.retryableStatusCodes = retryableStatusCodes
        self.sleep = sleep
    }

    /// The delay before attempt `attempt + 1`, or `nil` if no retry should be made.
    func delay(after attempt: Int, retryAfter: String?, alreadyWaited: Duration, now: Date) -> Duration? {
        guard attempt < maximumAttempts else { return nil }
        var delay = initialDelay * Int(1 << min(attempt - 1, 30))
        if jitter > 0 {
            let fraction = 1 - jitter + jitter * Double.random(in: 0...1)
            delay = delay * fraction
        }
        delay = min(delay, maximumDelay)
        if let retryAfter, let requested = RetryAfter.parse(retryAfter, now: now) {
            guard requested <= maximumDelay else { return nil }
            delay = max(delay, requested)
        }
        guard alreadyWaited + delay <= maximumTotalDelay else { return nil }
        return delay
    }
}

/// Parses `Retry-After`: delay-seconds or an HTTP date (RFC 9110 §10.2.3).
enum RetryAfter {
    static func parse(_ value: String, now: Date) -> Duration? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(trimmed), seconds >= 0 { return .seconds(seconds) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        for format in ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"] {
            formatter.dateFormat = format
            if let date = formatter.date(from: trimmed) {
                let seconds = max(0, date.timeIntervalSince(now))
                return .milliseconds(Int((seconds * 1000).rounded(.up)))
            }
        }
        return nil
    }
}
