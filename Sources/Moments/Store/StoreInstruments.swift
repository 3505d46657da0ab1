import Foundation
import MomentsSupport
import MomentsObservability

/// A store's figures (see ``MomentsStore/Configuration-swift.struct/metrics``): made
/// once, set where they change. Without a metrics factory every member does nothing.
final class StoreInstruments: Sendable {
    let tracer: (any MomentsTracer)?
    private let timelines: (any MomentsGauge)?
    private let evictions: (any MomentsCounter)?
    private let subscribers: (any MomentsGauge)?
    private let changesLag: (any MomentsGauge)?
    private let gaps: (any MomentsCounter)?
    private let writeDuration: (any MomentsHistogram)?
    private let writeFailures: (any MomentsCounter)?
    private let sharedLag: (any MomentsHistogram)?

    init(configuration: MomentsStore.Configuration) {
        tracer = configuration.tracer
        isTracing = configuration.tracer != nil
        let metrics = configuration.metrics
        isMeasuring = metrics != nil
        timelines = metrics?.makeGauge("moments.store.timelines", dimensions: [])
        evictions = metrics?.makeCounter("moments.store.evictions", dimensions: [])
        subscribers = metrics?.makeGauge("moments.store.subscribers", dimensions: [])
        changesLag = metrics?.makeGauge("moments.store.changes.lag.max", dimensions: [])
        gaps = metrics?.makeCounter("moments.store.changes.gaps", dimensions: [])
        writeDuration = metrics?.makeHistogram("moments.store.persistence.write.duration", unit: "s", dimensions: [])
        writeFailures = metrics?.makeCounter("moments.store.persistence.write.failures", dimensions: [])
        sharedLag = metrics?.makeHistogram("moments.store.shared.lag", unit: "s", dimensions: [])
    }

    /// Whether a tracer was given. Without one the store starts no spans of its own, so
    /// the service's spans are children of the caller's (a span no tracer records is
    /// not a parent anyone can find).
    let isTracing: Bool

    /// Whether a metrics factory was given (a stored flag: reading an optional
    /// existential copies it, which the store's hot path should not pay for).
    let isMeasuring: Bool

    func timelinesInMemory(_ count: Int) { timelines?.set(Double(count)) }
    func evicted(_ count: Int) { if count > 0 { evictions?.increment(by: count) } }
    func subscriberCount(_ count: Int) { subscribers?.set(Double(count)) }
    func slowestConsumerBacklog(_ count: Int) { changesLag?.set(Double(count)) }
    func gap() { gaps?.increment(by: 1) }

    func wrote(in duration: Duration, failed: Bool) {
        writeDuration?.record(duration.seconds)
        if failed { writeFailures?.increment(by: 1) }
    }

    /// Another instance confirmed a change by `confirmed`; it is applied at `now`.
    func appliedShared(confirmedBy confirmed: Date, now: Date) {
        sharedLag?.record(max(0, now.timeIntervalSince(confirmed)))
    }
}
