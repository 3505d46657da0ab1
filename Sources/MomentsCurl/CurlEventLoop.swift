import Foundation
import MomentsCCurl
import Synchronization
import MomentsSupport
import MomentsHTTP

/// One libcurl multi handle driven by one thread of its own: the thread adds submitted
/// transfers, runs `curl_multi_perform`, answers finished transfers, and sleeps in
/// `curl_multi_poll` until a socket is ready, a libcurl timer is due, or another thread
/// calls `curl_multi_wakeup`.
///
/// Other threads only put transfers into the inbox and wake the loop; they never touch
/// libcurl's handles, and never wait for the loop.
///
/// The loop hands libcurl only transfers it can start at once: at most
/// `maximumConnectionsPerHost` to one origin (and `maximumConnections` in all), the rest
/// waiting here, in order, until one of that origin's transfers ends. libcurl 7.88 does
/// not start a transfer it queued for want of a connection when a connection frees up,
/// only when its connect timer fires (up to its 10 s connect timeout later). A waiting
/// transfer's deadline runs while it waits: it is answered `timedOut` when it passes.
///
/// Safety of `@unchecked Sendable`: `active`, `idleHandles`, the two watches and the
/// busy-period counts are read and written only on the loop's thread (`run()`); `multi`
/// is created in `init`, before the thread starts, and freed by that thread when it
/// ends; `curl_multi_wakeup` is the one multi-handle call libcurl allows from any
/// thread; the inbox is behind a lock.
final class CurlEventLoop: @unchecked Sendable {
    private struct Inbox {
        var added: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
        /// Whether the loop's thread has ended and released the multi handle: from then
        /// on nothing may touch it.
        var ended = false
        /// Callers of ``stopAndWait()`` waiting for the thread to end.
        var endWaiters: [CheckedContinuation<Void, Never>] = []
        /// Whether the loop is (about to be) asleep in `curl_multi_poll`: only then does
        /// a submission need `curl_multi_wakeup` (a system call), and only the first.
        var sleeping = false

        var isEmpty: Bool { added.isEmpty && cancelled.isEmpty && !stopping }

        /// Whether the caller must wake the loop for what it just put in.
        mutating func takeWakeUp() -> Bool {
            defer { sleeping = false }
            return sleeping
        }
    }

    private let multi: UnsafeMutableRawPointer
    private let setup: CurlEasySetup
    private let inbox = PThreadMutex(Inbox())
    private let inFlight = Atomic<Int>(0)
    /// Submissions, cancellations and stops waiting in the inbox (read without its lock
    /// while the loop watches for them).
    private let submissions = Atomic<Int>(0)
    private var active: [UnsafeMutableRawPointer: (transfer: CurlTransfer, handle: CurlHandle)] = [:]
    /// Transfers handed to libcurl, per origin; those waiting for one of the origin's slots.
    private var activePerOrigin: [String: Int] = [:]
    private var waiting: [String: Ring<CurlTransfer>] = [:]
    private var waitingCount = 0
    private let perOriginLimit: Int
    private let totalLimit: Int
    /// The deadlines of waiting transfers.
    private let waitDeadlines = DeadlineTimer()
    private var idleHandles: [CurlHandle] = []
    /// Idle handles kept for reuse; more are freed.
    private let idleHandleLimit = 256
    /// Before sleeping, the loop watches briefly (see ``BriefWatch``): after answering
    /// the last caller in flight, for that caller's next request; with one request in
    /// flight, for its answer. Either then costs no wake-up of a sleeping thread.
    private var nextRequestWatch: BriefWatch
    private var answerWatch: BriefWatch
    /// Transfers begun since the loop last had none in flight, and whether the last such
    /// busy period held a single one: the mark of a caller sending one request at a time.
    private var transfersThisBusyPeriod = 0
    private var lastBusyPeriodWasSingle = false

    /// Creates the multi handle and starts the thread; `nil` when libcurl cannot
    /// initialize.
    init?(configuration: CurlTransport.Configuration) {
        guard CurlLibrary.isInitialized, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        setup = CurlEasySetup(configuration: configuration)
        nextRequestWatch = BriefWatch(window: configuration.busyPollWindow)
        answerWatch = BriefWatch(window: configuration.busyPollWindow)
        // The loop keeps the limits itself (see the type's documentation): libcurl is given none.
        perOriginLimit = max(0, configuration.maximumConnectionsPerHost)
        totalLimit = max(0, configuration.maximumConnections)
        // Keep as many idle connections as may be open, so none is closed only to be reopened.
        let cacheSize = max(configuration.maximumConnections, configuration.maximumConnectionsPerHost * 4, 16)
        _ = moments_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, cacheSize)
        let thread = Thread { [self] in run() }
        thread.name = "MomentsCurl.CurlTransport"
        thread.start()
    }

    /// Whether the loop's thread has ended.
    var hasEnded: Bool { inbox.withLock { $0.ended } }

    /// Transfers submitted and not yet answered.
    var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    /// Hands `transfer` to the loop; once the loop is stopping, answers it at once with
    /// a failure that sent nothing.
    ///
    /// The loop is woken under the inbox's lock, so a wake-up never reaches a multi
    /// handle the ending loop has released (it takes the lock before releasing it).
    func submit(_ transfer: CurlTransfer) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inFlight.add(1, ordering: .relaxed)
            inbox.added.append(transfer)
            submissions.add(1, ordering: .releasing)
            if inbox.takeWakeUp() { curl_multi_wakeup(multi) }
            return true
        }
        if !accepted {
            _ = transfer.finish(.failure(.transportFailure(TransportFailure(kind: .requestNotSent, message: "the transport was shut down"))))
        }
    }

    /// Asks the loop to abandon `transfer` (already answered by the caller's side).
    func cancel(_ transfer: CurlTransfer) {
        inbox.withLock { inbox in
            guard !inbox.stopping else { return }  // the ending loop answers it
            inbox.cancelled.append(transfer)
            if inbox.takeWakeUp() { curl_multi_wakeup(multi) }
        }
    }

    /// Ends the loop; transfers still running are answered as cancelled.
    func stop() {
        inbox.withLock { inbox in
            guard !inbox.stopping else { return }
            inbox.stopping = true
            submissions.add(1, ordering: .releasing)
            curl_multi_wakeup(multi)
        }
    }

    /// Ends the loop (as ``stop()``) and returns once its thread has ended: every
    /// transfer answered, every connection closed, the multi handle released.
    func stopAndWait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ended = inbox.withLock { inbox -> Bool in
                guard !inbox.ended else { return true }
                inbox.endWaiters.append(continuation)
                if !inbox.stopping {
                    inbox.stopping = true
                    submissions.add(1, ordering: .releasing)
                    curl_multi_wakeup(multi)
                }
                return false
            }
            if ended { continuation.resume() }
        }
    }

    // MARK: The loop's thread

    private func run() {
        var running: Int32 = 0
        while true {
            let (added, cancelled, stopping) = inbox.withLock { inbox in
                defer {
                    inbox.added.removeAll(keepingCapacity: true)
                    inbox.cancelled.removeAll(keepingCapacity: true)
                    submissions.store(0, ordering: .relaxed)
                }
                return (inbox.added, inbox.cancelled, inbox.stopping)
            }
            for transfer in added { admit(transfer) }
            for transfer in cancelled {
                if let easy = transfer.easy, let entry = active[easy], entry.transfer === transfer {
                    end(entry.transfer, entry.handle)
                } else if waiting[transfer.origin]?.removeFirst(where: { $0 === transfer }) == true {
                    if waiting[transfer.origin]?.isEmpty == true { waiting[transfer.origin] = nil }
                    waitingCount -= 1
                    transfer.disarmWaitDeadline(on: waitDeadlines)
                    inFlight.subtract(1, ordering: .relaxed)
                }
            }
            if stopping { break }
            _ = curl_multi_perform(multi, &running)
            if watchCaughtSomething(afterAnswering: answerFinishedTransfers()) { continue }
            // Sleep only with an empty inbox; from here on, a submission wakes the loop
            // (a wake-up sent before the poll begins makes it return at once).
            guard inbox.withLock({ inbox in
                guard inbox.isEmpty else { return false }
                inbox.sleeping = true
                return true
            }) else { continue }
            _ = curl_multi_poll(multi, nil, 0, 10_000, nil)
            inbox.withLock { $0.sleeping = false }
        }
        for (transfer, handle) in active.values {
            transfer.finish(.failure(.cancelled()))
            end(transfer, handle)
        }
        for queue in waiting.values {
            for transfer in queue {
                transfer.finish(.failure(.cancelled()))
                inFlight.subtract(1, ordering: .relaxed)
            }
        }
        waiting.removeAll()
        for handle in idleHandles { handle.close() }
        idleHandles.removeAll()
        let waiters = inbox.withLock { inbox in
            inbox.ended = true
            defer { inbox.endWaiters = [] }
            return inbox.endWaiters
        }
        curl_multi_cleanup(multi)
        for waiter in waiters { waiter.resume() }
    }

    /// Starts `transfer` if its origin (and the transport) has a free slot; otherwise it
    /// waits for one, its deadline running.
    private func admit(_ transfer: CurlTransfer) {
        guard !transfer.isFinished else {
            inFlight.subtract(1, ordering: .relaxed)
            return
        }
        let origin = transfer.origin
        let originFull = perOriginLimit > 0 && activePerOrigin[origin, default: 0] >= perOriginLimit
        let transportFull = totalLimit > 0 && active.count >= totalLimit
        guard originFull || transportFull else {
            begin(transfer)
            return
        }
        waiting[origin, default: Ring()].append(transfer)
        waitingCount += 1
        transfer.armWaitDeadline(on: waitDeadlines) { [weak self] in self?.cancel(transfer) }
    }

    /// Starts waiting transfers while slots are free: first of `origin`, whose transfer
    /// just ended, then (when the transport's own limit was what held them) of any origin.
    private func startWaiting(after origin: String) {
        guard waitingCount > 0 else { return }
        startNext(of: origin)
        guard totalLimit > 0 else { return }
        for other in Array(waiting.keys) where other != origin {
            guard active.count < totalLimit else { return }
            startNext(of: other)
        }
    }

    private func startNext(of origin: String) {
        while perOriginLimit == 0 || activePerOrigin[origin, default: 0] < perOriginLimit,
              totalLimit == 0 || active.count < totalLimit,
              let transfer = waiting[origin]?.popFirst() {
            if waiting[origin]?.isEmpty == true { waiting[origin] = nil }
            waitingCount -= 1
            guard !transfer.isFinished else {
                // Cancelled, or its deadline passed, while it waited.
                inFlight.subtract(1, ordering: .relaxed)
                continue
            }
            transfer.disarmWaitDeadline(on: waitDeadlines)
            begin(transfer)
        }
    }

    private func begin(_ transfer: CurlTransfer) {
        guard let handle = idleHandles.popLast() ?? newHandle(for: transfer) else {
            inFlight.subtract(1, ordering: .relaxed)
            return
        }
        transfer.easy = handle.easy
        if let failure = setup.apply(to: handle, for: transfer) {
            transfer.finish(.failure(failure))
            release(transfer, handle)
            return
        }
        let added = curl_multi_add_handle(multi, handle.easy)
        guard added == CURLM_OK else {
            let said = String(cString: curl_multi_strerror(added))
            transfer.finish(.failure(.transportFailure(TransportFailure(kind: .other, message: "libcurl refused the transfer: \(said)"))))
            release(transfer, handle)
            return
        }
        active[handle.easy] = (transfer, handle)
        activePerOrigin[transfer.origin, default: 0] += 1
        transfersThisBusyPeriod += 1
    }

    /// A new handle with the transport's options set, or `nil` having answered the transfer.
    private func newHandle(for transfer: CurlTransfer) -> CurlHandle? {
        guard let easy = curl_easy_init() else {
            transfer.finish(.failure(.transportFailure(TransportFailure(kind: .other, message: "libcurl could not create a handle"))))
            return nil
        }
        let handle = CurlHandle(easy: easy)
        if let failure = setup.prepare(handle) {
            transfer.finish(.failure(failure))
            handle.close()
            return nil
        }
        return handle
    }

    /// Watches briefly before sleeping, for a caller sending one request at a time: after
    /// answering it, for its next request; with its request in flight, for the answer.
    /// With more in flight the loop rarely idles, and watching would take the CPU their
    /// callers need. Returns whether the watch caught something (the loop then goes
    /// round at once).
    private func watchCaughtSomething(afterAnswering answered: Bool) -> Bool {
        let drained = answered && active.isEmpty
        if drained {
            lastBusyPeriodWasSingle = transfersThisBusyPeriod == 1
            transfersThisBusyPeriod = 0
        }
        guard lastBusyPeriodWasSingle, transfersThisBusyPeriod <= 1 else { return false }
        if drained {
            guard nextRequestWatch.shouldWatch() else { return false }
            let caught = nextRequestWatch.watch(looksPerClockRead: 16) { submissions.load(ordering: .acquiring) != 0 }
            nextRequestWatch.record(caught: caught)
            return caught
        }
        guard active.count == 1, answerWatch.shouldWatch() else { return false }
        var ready: Int32 = 0
        let caught = answerWatch.watch {
            _ = curl_multi_poll(multi, nil, 0, 0, &ready)
            return ready > 0 || submissions.load(ordering: .acquiring) != 0
        }
        answerWatch.record(caught: caught)
        return caught
    }

    /// Answers the callers of finished transfers; returns whether there were any.
    @discardableResult
    private func answerFinishedTransfers() -> Bool {
        var answered = false
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let entry = active[easy] else { continue }
            // Counted out before its caller resumes: a caller whose send returned never
            // finds its own request still in flight.
            inFlight.subtract(1, ordering: .relaxed)
            entry.transfer.complete(moments_curl_message_result(message))
            end(entry.transfer, entry.handle, countedOut: true)
            answered = true
        }
        return answered
    }

    /// Takes a transfer's handle out of the multi handle and keeps it for reuse.
    private func end(_ transfer: CurlTransfer, _ handle: CurlHandle, countedOut: Bool = false) {
        active[handle.easy] = nil
        let origin = transfer.origin
        if let count = activePerOrigin[origin] { activePerOrigin[origin] = count > 1 ? count - 1 : nil }
        curl_multi_remove_handle(multi, handle.easy)
        release(transfer, handle, countedOut: countedOut)
        startWaiting(after: origin)
    }

    /// Keeps `handle` for reuse and counts the transfer out of ``requestsInFlight``
    /// (unless `countedOut`: already done).
    private func release(_ transfer: CurlTransfer, _ handle: CurlHandle, countedOut: Bool = false) {
        transfer.easy = nil
        // The handle must not point at the transfer once it is gone.
        _ = moments_curl_easy_setopt_pointer(handle.easy, CURLOPT_WRITEDATA, nil)
        _ = moments_curl_easy_setopt_pointer(handle.easy, CURLOPT_HEADERDATA, nil)
        _ = moments_curl_easy_setopt_pointer(handle.easy, CURLOPT_ERRORBUFFER, nil)
        if idleHandles.count < idleHandleLimit {
            idleHandles.append(handle)
        } else {
            handle.close()
        }
        if !countedOut { inFlight.subtract(1, ordering: .relaxed) }
    }
}

/// libcurl's process-wide initialization, done once.
enum CurlLibrary {
    static let isInitialized: Bool = moments_curl_global_init() == CURLE_OK
}
