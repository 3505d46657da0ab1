import Moments

/// A ``MomentsService`` over a ``SimulatedServer`` whose calls wait until the test says
/// when the server processes each one, and when (or whether) its answer arrives.
actor SimulatedService: MomentsService {
    struct NotAnswered: Error {}

    private enum Kind {
        case get(userID: String)
        case like(isLiked: Bool, momentID: String, userID: String)
    }

    private struct Call {
        let kind: Kind
        let continuation: CheckedContinuation<MomentsDetails, any Error>
        var answer: MomentsDetails?
    }

    private(set) var server: SimulatedServer
    private var calls: [Int: Call] = [:]
    private var nextID = 0
    /// Calls the server processed whose answer the client never got.
    private(set) var lostAnswers = 0
    private(set) var callsReceived = 0
    /// What happened to each call, for reports of stuck schedules.
    private(set) var log: [String] = []

    init(server: SimulatedServer) {
        self.server = server
    }

    func getMoments(userID: String) async throws -> MomentsDetails {
        try await enqueue(.get(userID: userID))
    }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) async throws -> MomentsDetails {
        try await enqueue(.like(isLiked: isLiked, momentID: momentID, userID: userID))
    }

    private func enqueue(_ kind: Kind) async throws -> MomentsDetails {
        nextID += 1
        let id = nextID
        callsReceived += 1
        log.append("#\(id) \(kind)")
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                calls[id] = Call(kind: kind, continuation: continuation)
                signalArrival()
            }
        } onCancel: {
            Task { await self.cancel(id) }
        }
    }

    private func cancel(_ id: Int) {
        log.append("#\(id) cancelled\(calls[id] == nil ? " (already ended)" : "")")
        guard let call = calls.removeValue(forKey: id) else { return }
        if call.answer != nil { lostAnswers += 1 }
        call.continuation.resume(throwing: CancellationError())
    }

    // MARK: - The test's controls

    /// Calls the server has not processed, and calls whose answers are held back.
    var pending: (unprocessed: [Int], answered: [Int]) {
        let unprocessed = calls.filter { $0.value.answer == nil }.keys.sorted()
        let answered = calls.filter { $0.value.answer != nil }.keys.sorted()
        return (unprocessed, answered)
    }

    var isEmpty: Bool { calls.isEmpty }

    private var arrivalWaiters: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

    /// Waits until `count` calls are waiting, unprocessed or answered; returns their ids in arrival order.
    func waitForCalls(_ count: Int) async -> [Int] {
        if calls.count < count {
            await withCheckedContinuation { arrivalWaiters.append((count, $0)) }
        }
        return calls.keys.sorted()
    }

    private func signalArrival() {
        let ready = arrivalWaiters.filter { $0.count <= calls.count }
        arrivalWaiters.removeAll { $0.count <= calls.count }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// The server processes call `id` now; its answer is held until delivered.
    func process(_ id: Int) {
        guard var call = calls[id], call.answer == nil else { return }
        log.append("#\(id) processed")
        switch call.kind {
        case .get(let userID): call.answer = server.timeline(userID)
        case .like(let isLiked, let momentID, let userID): call.answer = server.like(isLiked, momentID: momentID, userID: userID)
        }
        calls[id] = call
    }

    /// The answer of processed call `id` arrives.
    func deliver(_ id: Int) {
        guard let call = calls[id], let answer = call.answer else { return }
        log.append("#\(id) delivered")
        calls[id] = nil
        call.continuation.resume(returning: answer)
    }

    /// A like applied on the server by someone outside the store (another client).
    func serverLike(_ isLiked: Bool, momentID: String, userID: String) -> MomentsDetails {
        server.like(isLiked, momentID: momentID, userID: userID)
    }

    /// Call `id` fails: before the server saw it, or (if processed) with its answer lost.
    func fail(_ id: Int) {
        log.append("#\(id) failed")
        guard let call = calls.removeValue(forKey: id) else { return }
        if call.answer != nil { lostAnswers += 1 }
        call.continuation.resume(throwing: NotAnswered())
    }
}
