extension Duration {
    /// The duration in seconds, fractions included.
    package var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// The duration in whole nanoseconds, rounded toward zero.
    package var nanoseconds: Int64 {
        // `components` divides a 128-bit count: taken once.
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// The duration in whole milliseconds, rounded up (a deadline never shortens).
    package var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
