@testable import Moments
import MomentsNetworking
import MomentsTestSupport

/// One seeded schedule of one to three ``StoreCore``s, each in a ``CoreWorld``, over one
/// server (and, for several, one shared storage and change bus): random refreshes, likes
/// (concurrent ones of one user, of one moment, of several users), subscriptions,
/// reads of persistence, evictions (small memory), and a server that computes each
/// answer at an instant the schedule picks inside the request's interval, then
/// delivers, fails or loses it; a change bus that delays each instance's announcements
/// and loses them in interruptions; refreshes that apply the response cache's timeline
/// first (`.localThenRemote`, the cache invalidated by confirmed likes as the store
/// asks); writes that fail for a while (each failed batch
/// written with the next write, as the store's writer does). Single-threaded: the same seed gives the same history.
///
/// Checked after every step and at quiescence (the rules of ``MomentsStore``):
/// 1. a successful like returns its moment with `isLiked` and its liker's place in
///    `likes` as it set them (unless another call of the same user on the same moment
///    overlapped it);
/// 3. no subscriber, and no confirmed change on the feed, shows a register of a moment
///    older than one it showed before (the liker's own register while their like is in
///    flight aside, and a register its user changed from two instances at once: the
///    server alone orders those calls, and a refetch settles them);
/// 4. at quiescence, after a last refresh of every user (writes working again),
///    memory, persistence, the last snapshot and the server agree; and before it, with
///    no answer lost (and, shared, no write failed), memory already agrees with the
///    server.
struct CoreSimulation {
    let seed: UInt64
    var model: SimulatedServer.IsLikedModel = .perViewer
    var steps = 40
    var brokenRules: StoreCore.BrokenRules = []
    var tracing = false
    /// How many instances: 1 keeps its own storage; 2 or 3 share one.
    var instances = 1
    /// Whether writes fail for a while at random moments, and whether some refreshes
    /// take the cached timeline first (`.localThenRemote`): both drawn from a generator
    /// of their own, so the rest of a schedule is the same with or without them.
    var failsWrites = true
    var usesCache = true
    /// The writer's old flaw, for a test to find: an empty write does not retry what a
    /// failed write left out.
    var writerDropsEmptyWrites = false
    /// The store's old flaw, for a test to find: persistence is read while what failed
    /// writes left out waits to be written again.
    var readsBehindFailedWrites = false

    /// Runs the schedule; returns what went wrong (empty if nothing), and the trace if
    /// tracing.
    func run() -> (failures: [String], trace: [String]) {
        var generator = SeededGenerator(seed: seed)
        var additions = SeededGenerator(seed: seed &* 0x9E37_79B9_7F4A_7C15 &+ 1)
        let server = SimulatedServer(users: 4, moments: 5, model: model, using: &generator)
        let backend = SimulatedBackend(server: server, sharedBy: instances > 1 ? instances : nil)
        if tracing { backend.trace = [] } else { backend.shared?.keepsLog = false }
        let worlds = (0..<instances).map { instance in
            CoreWorld(backend: backend, instance: instance,
                      skew: instances > 1 ? Int64.random(in: -CoreWorld.margin...CoreWorld.margin, using: &generator) : 0,
                      capacity: Int.random(in: 1...4, using: &generator), brokenRules: brokenRules)
        }
        for world in worlds {
            world.writerDropsEmptyWrites = writerDropsEmptyWrites
            world.writerReadsBehindFailedWrites = readsBehindFailedWrites
        }
        let users = server.userIDs

        for _ in 0..<steps {
            backend.tick()
            if failsWrites, Int.random(in: 0..<30, using: &additions) == 0, let world = worlds.randomElement(using: &additions) {
                // The disk (or the connection to shared storage) fails, or works again.
                world.writesFail.toggle()
                world.note(world.writesFail ? "writes fail from now" : "writes work again")
            }
            let world = worlds.randomElement(using: &generator) ?? worlds[0]
            if instances > 1, Int.random(in: 0..<4, using: &generator) == 0 {
                // The change bus: an announcement delivered, an interruption, a re-read.
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: world.interrupt()
                case 1: world.resynchronise()
                default: world.receiveNextCommit()
                }
                worlds.forEach(checkLikes)
                continue
            }
            switch Int.random(in: 0..<100, using: &generator) {
            case 0..<12:
                let user = users.randomElement(using: &generator) ?? "u0"
                world.refresh(user, source: usesCache && Bool.random(using: &additions) ? .cacheThenServer : .server)
            case 12..<34:
                let user = users.randomElement(using: &generator) ?? "u0"
                let moments = world.server.timelines[user] ?? ["m0"]
                if Int.random(in: 0..<4, using: &generator) == 0 {
                    // A storm: 2 to 4 likes of one user at once, of different moments.
                    for momentID in moments.shuffled(using: &generator).prefix(Int.random(in: 2...4, using: &generator)) {
                        world.like(Bool.random(using: &generator), momentID: momentID, userID: user)
                    }
                } else {
                    world.like(Bool.random(using: &generator), momentID: moments.randomElement(using: &generator) ?? "m0", userID: user)
                }
            case 34..<38:
                let user = users.randomElement(using: &generator) ?? "u0"
                if world.watched.users.contains(user) { world.unsubscribe(user) } else { world.subscribe(user) }
            case 38..<44:
                if let user = world.pendingLoads.randomElement(using: &generator) { world.completeLoad(user) }
            case 44..<52:
                if let id = world.turnsGiven.randomElement(using: &generator) {
                    world.dispatch(id, cancelled: Int.random(in: 0..<10, using: &generator) == 0)
                }
            case 52..<68:
                if let id = world.unprocessed.randomElement(using: &generator) { world.process(id) }
            case 68..<84:
                if let id = world.answered.randomElement(using: &generator) { world.deliver(id) }
            case 84..<88:
                if let id = (world.unprocessed + world.answered).randomElement(using: &generator) {
                    world.fail(id, mayHaveReachedServer: Bool.random(using: &generator))
                }
            case 88..<94:
                if let id = world.finishedRefreshes.randomElement(using: &generator) { world.finishRefresh(id) }
            default:
                if let user = world.pendingSettlings.randomElement(using: &generator) { world.settleNext(user) }
            }
            checkLikes(world)
        }

        quiesce(worlds, using: &generator)
        worlds.forEach(checkLikes)
        worlds.forEach(checkBeforeFinalRefresh)
        // Writes work again (those that failed are written with the next write, even one
        // with nothing new); then a last refresh of every user on every instance, all at once.
        for world in worlds where world.writesFail {
            world.writesFail = false
            world.note("writes work again")
        }
        for world in worlds {
            for user in users {
                backend.tick()
                world.refresh(user, source: usesCache && Bool.random(using: &additions) ? .cacheThenServer : .server)
            }
        }
        quiesce(worlds, using: &generator)
        worlds.forEach(checkConvergence)
        worlds.forEach(checkMonotone)
        if tracing, let log = backend.shared?.log { backend.trace?.append(contentsOf: log.map { "storage: \($0)" }) }
        return (backend.failures, backend.trace ?? [])
    }

    /// The shortest schedule of this seed that still fails (its first steps, then
    /// quiescence and the final checks), or `nil` if this one passes: what a regression
    /// test keeps.
    func shrunk() -> CoreSimulation? {
        guard !run().failures.isEmpty else { return nil }
        for count in 1...steps {
            var shorter = self
            shorter.steps = count
            if !shorter.run().failures.isEmpty { return shorter }
        }
        return self
    }

    /// Runs everything in flight to its end, in a random order, failing no request and
    /// delivering every announcement (writes fail as they did).
    private func quiesce(_ worlds: [CoreWorld], using generator: inout SeededGenerator) {
        /// One thing that can happen next.
        enum Move {
            case load(CoreWorld, String), dispatch(CoreWorld, Int), process(CoreWorld, Int), deliver(CoreWorld, Int)
            case finish(CoreWorld, Int), settle(CoreWorld, String), resynchronise(CoreWorld), receive(CoreWorld)
        }
        var rounds = 0
        var moves: [Move] = []
        // Scratch lists, kept from round to round: the moves are listed again at every one.
        var ids: [Int] = []
        var requests: [(id: Int, isAnswered: Bool)] = []
        var users: [String] = []
        while true {
            moves.removeAll(keepingCapacity: true)
            for world in worlds {
                world.pendingLoads(into: &users)
                for user in users { moves.append(.load(world, user)) }
                world.turnsGiven(into: &ids)
                for id in ids { moves.append(.dispatch(world, id)) }
                world.requests(into: &requests)
                for request in requests { moves.append(request.isAnswered ? .deliver(world, request.id) : .process(world, request.id)) }
                world.finishedRefreshes(into: &ids)
                for id in ids { moves.append(.finish(world, id)) }
                world.pendingSettlings(into: &users)
                for user in users { moves.append(.settle(world, user)) }
                if world.resynchronising { moves.append(.resynchronise(world)) }
            }
            for instance in worlds[0].backend.shared?.instancesWithAnnouncements ?? [] { moves.append(.receive(worlds[instance])) }
            guard !moves.isEmpty else { return }
            rounds += 1
            if rounds > 20_000 {
                let world = worlds[0]
                world.failures.append("never quiet: \(world.refreshes.count) refreshes, \(world.likes.count) likes, \(world.requests.count) requests, settling \(world.settlings.keys.sorted())")
                return
            }
            worlds[0].backend.tick()
            switch moves[Int.random(in: 0..<moves.count, using: &generator)] {
            case .load(let world, let user): world.completeLoad(user)
            case .dispatch(let world, let id): world.dispatch(id, cancelled: false)
            case .process(let world, let id): world.process(id)
            case .deliver(let world, let id): world.deliver(id)
            case .finish(let world, let id): world.finishRefresh(id)
            case .settle(let world, let user): world.settleNext(user)
            case .resynchronise(let world): world.resynchronise()
            case .receive(let world): world.receiveNextCommit()
            }
            worlds.forEach(checkLikes)
        }
    }

    // MARK: - The rules

    /// Rule 1, for every like call that ended since the last check.
    private func checkLikes(_ world: CoreWorld) {
        let records = world.likeRecords[world.likesChecked...]
        world.likesChecked = world.likeRecords.count
        for call in records {
            guard case .some(let returned) = call.returned else { continue }
            // By any instance.
            let overlapped = world.backend.endedLikes.contains { other in
                other.userID == call.userID && other.momentID == call.momentID && !(other.start == call.start && other.end == call.end)
                    && other.start <= call.end && call.start <= other.end
            } || world.backend.likesInFlight.contains { $0.userID == call.userID && $0.momentID == call.momentID }
            guard !overlapped else { continue }
            let liked = returned?.likes?.contains { $0.id == call.userID } ?? false
            // A call whose timeline does not hold the moment returns no moment.
            guard let returned else {
                if world.server.timelines[call.userID]?.contains(call.momentID) == true {
                    world.failures.append("setLike(\(call.isLiked), \(call.momentID), \(call.userID)) returned a timeline without its moment")
                }
                continue
            }
            if returned.isLiked != call.isLiked || liked != call.isLiked {
                world.failures.append("i\(world.instance) rule 1: setLike(\(call.isLiked), \(call.momentID), \(call.userID)) at step \(call.end) returned isLiked \(returned.isLiked.map(String.init) ?? "nil"), likes [\((returned.likes ?? []).map(\.id).joined(separator: ","))]")
            }
        }
    }

    /// Rule 4 before the final refreshes: with no answer lost and no settling failed,
    /// every timeline in memory already agrees with the server (`isLiked` too where it
    /// is the viewer's own). With shared storage, no write may have failed either: an
    /// instance learns another's changes from its commits.
    private func checkBeforeFinalRefresh(_ world: CoreWorld) {
        guard world.lostAnswers == 0, world.failedSettlings == 0, instances == 1 || world.backend.failedWrites == 0 else { return }
        for user in world.server.userIDs {
            guard let held = world.core.state.displayedTimeline(user) else { continue }
            let truth = world.server.timeline(user)
            let comparable: (MomentsDetails) -> MomentsDetails = model == .global ? \.withoutIsLiked : { $0 }
            if comparable(held) != comparable(truth) {
                world.failures.append("i\(world.instance) rule 4, before the final refresh: \(user) holds \(summarize(held)) ≠ server \(summarize(truth))")
            }
        }
    }

    /// Rule 4: memory, persistence, the last snapshot and the server agree.
    private func checkConvergence(_ world: CoreWorld) {
        for user in world.server.userIDs {
            let truth = world.server.timeline(user)
            let persisted = world.persisted(user)
            let held = world.core.state.displayedTimeline(user) ?? persisted
            if held != truth { world.failures.append("i\(world.instance) rule 4: \(user) holds \(held.map(summarize) ?? "nothing") ≠ server \(summarize(truth))") }
            if persisted != truth { world.failures.append("i\(world.instance) rule 4: \(user) persisted \(persisted.map(summarize) ?? "nothing") ≠ server \(summarize(truth))") }
            if world.watched.users.contains(user), let last = world.snapshots[user]?.last?.details, last != truth {
                world.failures.append("i\(world.instance) rule 4: \(user)'s last snapshot \(summarize(last)) ≠ server \(summarize(truth))")
            }
        }
    }

    /// Rule 3: each register walks forward through its history, in every subscriber's
    /// snapshots and in the feed's confirmed changes.
    private func checkMonotone(_ world: CoreWorld) {
        let server = world.server
        let calls = world.backend.endedLikes
        let raced = Set(calls.flatMap { call in
            calls.contains { other in
                other.instance != call.instance && other.userID == call.userID && other.momentID == call.momentID
                    && other.start <= call.end && call.start <= other.end
            } ? [SimulatedServer.LikeRegister(momentID: call.momentID, userID: call.userID)] : []
        })
        for (viewer, snapshots) in world.snapshots {
            var seen: [SimulatedServer.LikeRegister: [Bool]] = [:]
            for (details, ownPending) in snapshots {
                for moment in details.moments {
                    for user in server.userIDs where !(user == viewer && ownPending.contains(moment.id)) {
                        seen[.init(momentID: moment.id, userID: user), default: []].append(moment.likes?.contains { $0.id == user } ?? false)
                    }
                }
            }
            for (register, values) in seen where !raced.contains(register) && !server.isMonotone(values, momentID: register.momentID, userID: register.userID) {
                world.failures.append("i\(world.instance) rule 3: \(viewer) saw \(register.momentID)/\(register.userID) go back: \(values), history \(server.history[register] ?? [])")
            }
        }
        var seen: [SimulatedServer.LikeRegister: [Bool]] = [:]
        for moment in world.feedMoments {
            for user in server.userIDs {
                seen[.init(momentID: moment.id, userID: user), default: []].append(moment.likes?.contains { $0.id == user } ?? false)
            }
        }
        for (register, values) in seen where !raced.contains(register) && !server.isMonotone(values, momentID: register.momentID, userID: register.userID) {
            world.failures.append("i\(world.instance) rule 3: the feed's \(register.momentID)/\(register.userID) went back: \(values), history \(server.history[register] ?? [])")
        }
    }
}
