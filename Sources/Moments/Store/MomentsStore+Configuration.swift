public import MomentsNetworking

extension MomentsStore {
    /// How a ``MomentsStore`` keeps timelines.
    public struct Configuration: Sendable {
        /// How many users' timelines are kept in memory; the rest are reloaded from
        /// persistence when asked for. Timelines with live subscribers or likes in flight
        /// are always kept. The default is 1,000.
        public var maximumTimelinesInMemory: Int = 1_000

        /// Receives failures that have no caller to be thrown to, such as a persisted
        /// timeline that cannot be read when a stream starts. The default is `nil`.
        public var logHandler: LogHandler?

        /// Creates a configuration with every default.
        public init() {}

        /// Creates a configuration, then lets `configure` adjust it.
        public init(configure: (inout Configuration) -> Void) {
            configure(&self)
        }
    }
}
