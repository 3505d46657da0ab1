@testable import Moments
import MomentsNetworking
import MomentsTestSupport

import Foundation

/// What the instances of a simulation share: the server, the clock, the storage (one
/// instance's own, or one that several share with PostgreSQL's rules and a change bus),
/// the trace and the failures found.
final class SimulatedBackend {
    var server: SimulatedServer
    /// Storage several instances share; `nil`: each instance's own (``CoreWorld/disk``).
    var shared: SharedStorageModel?
    private(set) var now: Int64 = 1_000_000_000
    private(set) var step = 0
    var trace: [String]?
    var failures: [String] = []

    /// Every instance's like calls that ended, and those in flight (for rule 1's
    /// overlapping calls).
    var endedLikes: [CoreWorld.LikeCallRecord] = []
    var likesInFlight: [(userID: String, momentID: String)] = []
    /// Writes that failed, by any instance.
    var failedWrites = 0

    init(server: SimulatedServer, sharedBy instances: Int?) {
        self.server = server
        shared = instances.map { SharedStorageModel(instances: $0) }
    }

    /// Moves the simulated clock on (every step is at a new instant).
    func tick() {
        now += 1_000
        step += 1
    }

    func note(_ text: @autoclosure () -> String) {
        if trace != nil { trace?.append("[\(step)] \(text())") }
    }
}

/// One ``StoreCore`` and everything its owner does around it, on one thread, on the
/// simulated clock: the owner's part of ``MomentsStore`` (calls, loads, settling,
/// subscribers, the change bus), over a ``SimulatedBackend``.
///
/// Nothing here waits or reads a real clock: the simulation picks each next step with
/// its seeded generator, so a schedule replays exactly from its seed.
final class CoreWorld {
    /// A call of the owner's, in flight.
    enum Call {
        case refresh(userID: String)
        case like(userID: String, momentID: String, isLiked: Bool)
    }

    /// Where a refresh is.
    enum RefreshStage {
        /// Waiting for its timeline's read from persistence; its request's number.
        case loading(request: Int)
        /// Its request is at the server (see ``Request``).
        case sent(request: Int, at: StoreInstant)
        /// Its answer was applied; the call returns at a later step.
        case answered(request: Int)
    }

    /// Where a like call is.
    enum LikeStage {
        case loading
        /// Shown, waiting for its chain's calls before it.
        case waiting
        /// Its turn came; it sends at a later step (or is cancelled first).
        case turnGiven
        /// Its request is at the server.
        case sent(request: Int, at: StoreInstant)
    }

    /// A request at the server: computed when the server processes it (an instant the
    /// schedule picks), delivered later.
    struct Request {
        let caller: Int
        var answer: MomentsDetails?
    }

    struct Refresh {
        let userID: String
        var stage: RefreshStage
        /// `.cacheThenServer`: the cached timeline, if any, is applied when it is sent.
        var source: TimelineSource = .server
        /// Callers joined to it (1 + joins), and whether a settling waits on it.
        var settlers: [String] = []
    }

    struct Like {
        let userID: String
        let momentID: String
        let isLiked: Bool
        var stage: LikeStage
        /// The steps at which it began; ``LikeCallRecord`` when it ends.
        let start: Int
    }

    /// What a like call returned (for rule 1).
    struct LikeCallRecord {
        let instance: Int
        let userID: String
        let momentID: String
        let isLiked: Bool
        let start: Int
        let end: Int
        /// The liked moment in the timeline the call returned; `nil` if it failed,
        /// `.some(nil)` if the timeline did not hold it.
        let returned: Moment??
    }

    var core: StoreCore
    let backend: SimulatedBackend
    /// This instance's number (its inbox in shared storage).
    let instance: Int
    /// How far this instance's wall clock is off, in nanoseconds.
    let skew: Int64
    /// The persisted state, as the store's batches wrote it, without shared storage.
    var diskTimelines: [String: StoredTimeline] = [:]
    var diskMoments: [String: Moment] = [:]
    /// This instance's response cache: the last timeline received for each user's
    /// refresh, until a confirmed like invalidates it.
    var cache: [String: MomentsDetails] = [:]
    /// Whether this instance's writes fail now (a full disk, a lost connection).
    var writesFail = false
    /// What failed writes left out, written with the next write, as the store's
    /// `PersistenceWriter` does.
    var writeBacklog = WriteQueue()
    /// The writer's old flaws (``CoreSimulation/writerDropsEmptyWrites``,
    /// ``CoreSimulation/readsBehindFailedWrites``).
    var writerDropsEmptyWrites = false
    var writerReadsBehindFailedWrites = false
    /// Whether the last write failed: the call that made it throws.
    private var lastWriteFailed = false
    /// The bus was interrupted: the instance reads the shared state again at a later step.
    var resynchronising = false
    let watched: WatchedUsers
    /// Each subscriber's snapshots, in order, with the registers its own likes in flight
    /// hid at the time.
    var snapshots: [String: [(details: MomentsDetails, ownPending: Set<String>)]] = [:]
    /// Confirmed moment changes on the feed, in order.
    var feedMoments: [Moment] = []

    private var lastNumber = 0
    var refreshes: [Int: Refresh] = [:]
    var likes: [Int: Like] = [:]
    var requests: [Int: Request] = [:]
    /// Users whose timelines are being read, and the calls waiting for each read.
    var loads: [String: [Int]] = [:]
    /// Where the settling of one user's timeline is.
    enum SettleStage: Equatable {
        /// It asks the core what next at a later step.
        case asking
        /// It waits for this refresh; `joined`: one already in flight, whose failure is
        /// not the settling's.
        case waiting(refresh: Int, joined: Bool)
    }

    /// Users whose timelines are being settled.
    var settlings: [String: SettleStage] = [:]
    /// Every like call that ended, in order; the first `likesChecked` were checked.
    var likeRecords: [LikeCallRecord] = []
    var likesChecked = 0
    /// Answers the server computed and the store never received.
    var lostAnswers = 0
    /// Settlings whose refetch failed (left to the next refresh).
    var failedSettlings = 0
    /// The margin of this instance's clock readings: half the skew instances tolerate.
    static let margin: Int64 = 50_000

    init(backend: SimulatedBackend, instance: Int = 0, skew: Int64 = 0, capacity: Int, brokenRules: StoreCore.BrokenRules) {
        self.backend = backend
        self.instance = instance
        self.skew = skew
        let watched = WatchedUsers()
        self.watched = watched
        let shared = backend.shared != nil
        core = StoreCore(capacity: capacity, likesAreExclusive: !shared, keepsConfirmationIntervals: shared, logsDebug: backend.trace != nil,
                         reportsEvictions: false, isWatched: { watched.users.contains($0) })
        core.brokenRules = brokenRules
    }

    var server: SimulatedServer {
        get { backend.server }
        set { backend.server = newValue }
    }
    var failures: [String] {
        get { backend.failures }
        set { backend.failures = newValue }
    }
    var trace: [String]? { backend.trace }
    var step: Int { backend.step }
    var instant: StoreInstant { StoreInstant(nanoseconds: backend.now) }

    /// This instance's reading of its clocks now, as ``ClockReading`` takes it: its wall
    /// clock is off by ``skew``.
    var reading: ClockReading? {
        guard backend.shared != nil else { return nil }
        let date = Date(timeIntervalSince1970: 1_800_000_000 + Double(backend.now + skew) / 1e9)
        return ClockReading(instant: instant, date: date, margin: Self.margin)
    }

    func note(_ text: @autoclosure () -> String) {
        backend.note("i\(instance) \(text())")
    }

    // MARK: - Storage

    private func load(_ userID: String) -> MomentsDetails? {
        if let shared = backend.shared { return shared.load(userID: userID) }
        return diskTimelines[userID]?.assemble(for: userID) { diskMoments[$0] }
    }

    /// The timeline persistence holds for `userID`.
    var persisted: (String) -> MomentsDetails? { { [unowned self] in self.load($0) } }

    /// Writes `batch` after what failed writes left out, as the store's writer does
    /// (a failed write is kept for the next, even an empty one).
    private func save(_ batch: PersistenceBatch) {
        lastWriteFailed = false
        if writerDropsEmptyWrites, batch.isEmpty { return }
        var write = writeBacklog
        write.append(batch)
        guard !write.isEmpty else { return }
        if writesFail {
            writeBacklog = write
            lastWriteFailed = true
            backend.failedWrites += 1
            note("  a write failed; kept for the next")
            return
        }
        writeBacklog = WriteQueue()
        for batch in write.batches { store(batch) }
    }

    private func store(_ batch: PersistenceBatch) {
        if backend.shared != nil {
            do {
                try backend.shared?.save(batch, from: instance)
            } catch {
                failures.append("i\(instance): a save failed: \(error)")
            }
            return
        }
        for (userID, timeline) in batch.timelines { diskTimelines[userID] = timeline }
        for (id, moment) in batch.moments { diskMoments[id] = moment }
    }

    private func holders(of momentID: String) -> [String] {
        if let shared = backend.shared { return shared.userIDs(holding: momentID) }
        return diskTimelines.filter { $0.value.entries.contains { $0.momentID == momentID } }.keys.sorted()
    }

    // MARK: - The change bus

    /// Applies the next announcement of another instance's commit.
    func receiveNextCommit() {
        guard let commit = backend.shared?.takeNext(for: instance), let reading else { return }
        note("received a commit of \(commit.moments.map(\.moment.id)) and timelines \(commit.timelines.map(\.userID))")
        findHolders(act(.sharedCommitted(commit, resynchronising: false), reading: reading).unheld)
    }

    /// The bus loses what it had for this instance and says so.
    func interrupt() {
        guard backend.shared != nil else { return }
        backend.shared?.interrupt(instance)
        note("interrupted")
        resynchronising = true
    }

    /// Reads the shared state of everything held again, after an interruption.
    func resynchronise() {
        guard resynchronising, let shared = backend.shared, let reading else { return }
        resynchronising = false
        let commit = shared.committedState(momentIDs: Array(core.state.records.keys).sorted(), userIDs: Array(core.state.timelines.keys).sorted())
        note("resynchronised")
        findHolders(act(.sharedCommitted(commit, resynchronising: true), reading: reading).unheld)
    }

    private func findHolders(_ momentIDs: [String]) {
        for momentID in momentIDs { act(.holdersFound(momentID: momentID, holders: holders(of: momentID))) }
    }

    private func nextNumber() -> Int {
        lastNumber += 1
        return lastNumber
    }

    // MARK: - The owner's calls

    /// A refresh of `userID`, or the one in flight (a refresh is shared); its number.
    @discardableResult
    func refresh(_ userID: String, source: TimelineSource = .server) -> Int {
        if let (id, _) = refreshes.first(where: { $0.value.userID == userID }) { return id }
        let id = nextNumber()
        refreshes[id] = Refresh(userID: userID, stage: .loading(request: 0), source: source)
        note("refresh \(userID) #\(id)\(source == .server ? "" : " (\(source))")")
        let request = nextNumber()
        if act(.refreshBegan(userID: userID, request: request)).needsLoad {
            refreshes[id]?.stage = .loading(request: request)
            wantLoad(userID, by: id)
        } else {
            requests[request] = Request(caller: id)
            refreshes[id]?.stage = .sent(request: request, at: instant)
            answerFromCache(id)
        }
        return id
    }

    /// Sends a refresh that waited for its timeline's read.
    private func sendRefresh(_ id: Int) {
        guard let refresh = refreshes[id], case .loading(let request) = refresh.stage else { return }
        requests[request] = Request(caller: id)
        refreshes[id]?.stage = .sent(request: request, at: instant)
        act(.refreshSent(userID: refresh.userID, request: request))
        answerFromCache(id)
    }

    /// Applies the cached timeline first, for a refresh under `.localThenRemote`, as the
    /// service hands it over as soon as the request is sent.
    private func answerFromCache(_ id: Int) {
        guard let refresh = refreshes[id], refresh.source == .cacheThenServer, case .sent(_, let sent) = refresh.stage,
              let cached = cache[refresh.userID] else { return }
        note("cache answered #\(id): \(summarize(cached))")
        let performed = act(.refreshAnswered(userID: refresh.userID, answer: MomentsAnswer(details: cached, origin: .cache), sent: sent,
                                             source: .cacheThenServer))
        if let refusal = performed.refusal { failures.append("a cached answer for \(refresh.userID) was refused: \(refusal)") }
    }

    func like(_ isLiked: Bool, momentID: String, userID: String) {
        let id = nextNumber()
        likes[id] = Like(userID: userID, momentID: momentID, isLiked: isLiked, stage: .loading, start: step)
        backend.likesInFlight.append((userID, momentID))
        note("like \(isLiked) \(momentID) by \(userID) #\(id)")
        act(.likeAsked(id, userID: userID, momentID: momentID, isLiked: isLiked))
        if core.markUsed(userID) { readyLike(id) } else { wantLoad(userID, by: id) }
    }

    private func readyLike(_ id: Int) {
        likes[id]?.stage = .waiting
        act(.likeReady(id))
    }

    private func wantLoad(_ userID: String, by caller: Int) {
        loads[userID, default: []].append(caller)
    }

    /// Completes the read of `userID`'s persisted timeline; the calls waiting on it go on.
    func completeLoad(_ userID: String) {
        guard let callers = loads.removeValue(forKey: userID) else { return }
        // As the store does, persistence is read only once what failed writes left out is
        // written; if that write fails, so does the read.
        if !writerReadsBehindFailedWrites, !writeBacklog.isEmpty {
            save(PersistenceBatch())
            if lastWriteFailed {
                note("the read of \(userID) failed: a failed write could not be written again")
                for caller in callers {
                    if refreshes[caller] != nil { sendRefresh(caller) } else if likes[caller] != nil { endLike(caller, .notSent, returned: nil) }
                }
                return
            }
        }
        let loaded = load(userID)
        note("loaded \(userID): \(loaded.map(summarize) ?? "nothing")")
        if act(.loaded(userID: userID, details: loaded)).refusal != nil { failures.append("a persisted timeline of \(userID) was refused") }
        for caller in callers {
            if refreshes[caller] != nil { sendRefresh(caller) } else if likes[caller] != nil { readyLike(caller) }
        }
    }

    /// Sends a like whose turn came (or cancels it before it leaves).
    func dispatch(_ id: Int, cancelled: Bool) {
        guard let like = likes[id], case .turnGiven = like.stage else { return }
        if cancelled {
            note("like #\(id) cancelled before sending")
            endLike(id, .notSent, returned: nil)
            return
        }
        let request = nextNumber()
        requests[request] = Request(caller: id)
        likes[id]?.stage = .sent(request: request, at: instant)
    }

    /// The server computes the answer to `request` now.
    func process(_ request: Int) {
        guard var pending = requests[request], pending.answer == nil else { return }
        if let refresh = refreshes[pending.caller] {
            pending.answer = server.timeline(refresh.userID)
        } else if let like = likes[pending.caller] {
            pending.answer = server.like(like.isLiked, momentID: like.momentID, userID: like.userID)
        }
        note("server processed #\(request) for #\(pending.caller): \(pending.answer.map(summarize) ?? "")")
        requests[request] = pending
    }

    /// Delivers the answer to `request`, computed before.
    func deliver(_ request: Int) {
        guard let pending = requests[request], let answer = pending.answer else { return }
        requests[request] = nil
        note("delivered #\(request) to #\(pending.caller)")
        if let refresh = refreshes[pending.caller], case .sent(_, let sent) = refresh.stage {
            cache[refresh.userID] = answer
            let performed = act(.refreshAnswered(userID: refresh.userID, answer: MomentsAnswer(details: answer, origin: .server(sentAt: nil)),
                                                 sent: sent, source: refresh.source), reading: reading)
            if let refusal = performed.refusal { failures.append("an answer for \(refresh.userID) was refused: \(refusal)") }
            refreshes[pending.caller]?.stage = .answered(request: request)
        } else if let like = likes[pending.caller], case .sent(_, let sent) = like.stage {
            let performed = endLike(pending.caller, .answered(MomentsAnswer(details: answer, origin: .server(sentAt: nil)), sent: sent), returned: nil)
            if performed.refusal != nil { failures.append("the answer to like #\(pending.caller) was refused") }
        }
    }

    /// Fails `request`: before the server processed it (`mayHaveReachedServer` as drawn:
    /// a client may not know), or after (its answer lost).
    func fail(_ request: Int, mayHaveReachedServer: Bool) {
        guard let pending = requests.removeValue(forKey: request) else { return }
        let lost = pending.answer != nil
        if lost { lostAnswers += 1 }
        note("failed #\(request) of #\(pending.caller)\(lost ? " (answer lost)" : "")")
        if let refresh = refreshes[pending.caller] {
            endRefresh(pending.caller, refresh, request: request, failed: true)
        } else if likes[pending.caller] != nil {
            endLike(pending.caller, .failed(mayHaveReachedServer: lost || mayHaveReachedServer), returned: nil)
        }
    }

    /// A refresh whose answer was applied returns.
    func finishRefresh(_ id: Int) {
        guard let refresh = refreshes[id], case .answered(let request) = refresh.stage else { return }
        endRefresh(id, refresh, request: request, failed: false)
    }

    private func endRefresh(_ id: Int, _ refresh: Refresh, request: Int?, failed: Bool) {
        refreshes[id] = nil
        act(.refreshEnded(userID: refresh.userID, request: request))
        for user in refresh.settlers {
            guard case .waiting(id, let joined) = settlings[user] else { continue }
            if failed, !joined {
                // The refetch asked for failed: the next refresh settles it.
                act(.settleFailed(userID: user))
                settlings[user] = nil
                failedSettlings += 1
            } else {
                settlings[user] = .asking
            }
        }
    }

    @discardableResult
    private func endLike(_ id: Int, _ outcome: StoreCore.LikeOutcome, returned: Moment??) -> MomentsStore.Performed {
        guard let like = likes.removeValue(forKey: id) else { return MomentsStore.Performed() }
        let performed = act(.likeEnded(id, outcome), reading: reading)
        var result: Moment?? = nil
        // A call whose write failed throws (the like stands, in memory and at the server).
        if case .answered = outcome, performed.refusal == nil, !lastWriteFailed {
            result = .some(core.state.displayedTimeline(like.userID)?.moment(withID: like.momentID))
        }
        let record = LikeCallRecord(instance: instance, userID: like.userID, momentID: like.momentID, isLiked: like.isLiked, start: like.start, end: step, returned: result)
        likeRecords.append(record)
        backend.endedLikes.append(record)
        if let index = backend.likesInFlight.firstIndex(where: { $0.userID == like.userID && $0.momentID == like.momentID }) {
            backend.likesInFlight.remove(at: index)
        }
        return performed
    }

    /// Asks the core what the settling of `userID` does next.
    func settleNext(_ userID: String) {
        guard settlings[userID] == .asking else { return }
        guard let refetch = act(.settleNext(userID: userID)).refetch else {
            settlings[userID] = nil
            return
        }
        let id = refresh(userID)
        refreshes[id]?.settlers.append(userID)
        settlings[userID] = .waiting(refresh: id, joined: refetch.joining)
    }

    func subscribe(_ userID: String) {
        watched.users.insert(userID)
        snapshots[userID] = []
        if let details = core.state.displayedTimeline(userID) {
            record(details, for: userID)
        } else if core.state.timelines[userID] == nil {
            if loads[userID] == nil { loads[userID] = [] }
        }
    }

    func unsubscribe(_ userID: String) {
        watched.users.remove(userID)
    }

    // MARK: - Performing the core's actions

    @discardableResult
    func act(_ event: StoreCore.Event, reading: ClockReading? = nil) -> MomentsStore.Performed {
        var performed = MomentsStore.Performed()
        for action in core.handle(event, at: instant, reading: reading) {
            switch action {
            case .emit(let kind):
                if case .moment(let change) = kind, change.phase != .optimistic {
                    feedMoments.append(change.moment)
                    note("  feed: \(change.moment.id)[\((change.moment.likes ?? []).map(\.id).joined(separator: ","))] \(change.phase)")
                }
            case .deliverSnapshots(let users):
                for user in users.sorted() where watched.users.contains(user) {
                    if let details = core.state.displayedTimeline(user) { record(details, for: user) }
                }
            case .persist:
                save(core.takeBatch())
            case .load:
                performed.needsLoad = true
            case .send(let id):
                if likes[id] != nil { likes[id]?.stage = .turnGiven }
            case .settle(let userID):
                settlings[userID] = .asking
            case .refetch(let userID, let joining):
                performed.refetch = (userID, joining)
            case .findHolders(let ids):
                performed.unheld += ids
            case .invalidateCachedTimelines(let momentID, let liker):
                var users = core.state.holders(of: momentID)
                users.insert(liker)
                users.formUnion(holders(of: momentID))
                for user in users.sorted() where cache.removeValue(forKey: user) != nil { note("  cache: dropped \(user)") }
            case .evicted:
                break
            case .refuse(let error):
                performed.refusal = error
            case .log(let level, let message, let userID, _):
                note("  store \(level) (\(userID)): \(message)")
            }
        }
        return performed
    }

    private func record(_ details: MomentsDetails, for userID: String) {
        let pending = Set(likes.values.filter { $0.userID == userID && !isLoading($0) }.map(\.momentID))
        snapshots[userID, default: []].append((details, pending))
    }

    private func isLoading(_ like: Like) -> Bool {
        if case .loading = like.stage { return true }
        return false
    }

    // MARK: - What can happen next

    // Each list is sorted (a dictionary's order differs from run to run; the seed alone
    // decides). Quiescence, which asks at every step, fills lists it keeps (`…(into:)`);
    // a step takes them made.
    var unprocessed: [Int] { requestIDs(answered: false) }
    var answered: [Int] { requestIDs(answered: true) }
    var turnsGiven: [Int] { collected(turnsGiven(into:)) }
    var finishedRefreshes: [Int] { collected(finishedRefreshes(into:)) }
    var pendingSettlings: [String] { collected(pendingSettlings(into:)) }
    var pendingLoads: [String] { collected(pendingLoads(into:)) }

    /// Replaces `ids` with the like calls whose turn came.
    func turnsGiven(into ids: inout [Int]) {
        ids.removeAll(keepingCapacity: true)
        for (id, like) in likes { if case .turnGiven = like.stage { ids.append(id) } }
        ids.sort()
    }

    /// Replaces `ids` with the refreshes whose answer was applied.
    func finishedRefreshes(into ids: inout [Int]) {
        ids.removeAll(keepingCapacity: true)
        for (id, refresh) in refreshes { if case .answered = refresh.stage { ids.append(id) } }
        ids.sort()
    }

    /// Replaces `users` with the settlings that ask the core what next.
    func pendingSettlings(into users: inout [String]) {
        users.removeAll(keepingCapacity: true)
        for (user, stage) in settlings where stage == .asking { users.append(user) }
        users.sort()
    }

    /// Replaces `users` with the users whose persisted timelines are being read.
    func pendingLoads(into users: inout [String]) {
        users.removeAll(keepingCapacity: true)
        users.append(contentsOf: loads.keys)
        users.sort()
    }

    /// Replaces `list` with the requests at the server, each with whether it has been answered.
    func requests(into list: inout [(id: Int, isAnswered: Bool)]) {
        list.removeAll(keepingCapacity: true)
        for (id, request) in requests { list.append((id, request.answer != nil)) }
        list.sort { $0.id < $1.id }
    }

    private func collected<Element>(_ fill: (inout [Element]) -> Void) -> [Element] {
        var list: [Element] = []
        fill(&list)
        return list
    }

    private func requestIDs(answered: Bool) -> [Int] {
        collected(requests(into:)).compactMap { $0.isAnswered == answered ? $0.id : nil }
    }

    /// Whether nothing is in flight.
    var isQuiet: Bool {
        refreshes.isEmpty && likes.isEmpty && requests.isEmpty && loads.isEmpty && settlings.isEmpty && !resynchronising
    }
}

/// The users with subscribers, read by the core's `isWatched`.
final class WatchedUsers {
    var users: Set<String> = []
}
