import Foundation
import MomentsCCurl
import MomentsNetworking
import Synchronization

/// One libcurl multi handle driven by one thread of its own: the thread adds submitted
/// transfers, runs `curl_multi_perform`, answers finished transfers, and sleeps in
/// `curl_multi_poll` until a socket is ready, a libcurl timer is due, or another thread
/// calls `curl_multi_wakeup`.
///
/// Other threads only put transfers into the inbox and wake the loop; they never touch
/// libcurl's handles, and never wait for the loop.
///
/// Safety of `@unchecked Sendable`: `active` and `idleHandles` are read and written only
/// on the loop's thread (`run()`); `multi` is created in `init`, before the thread
/// starts, and freed by that thread when it ends; `curl_multi_wakeup` is the one
/// multi-handle call libcurl allows from any thread; the inbox is a `Mutex`.
final class CurlEventLoop: @unchecked Sendable {
    private struct Inbox {
        var added: [CurlTransfer] = []
        var cancelled: [CurlTransfer] = []
        var stopping = false
    }

    private let multi: UnsafeMutableRawPointer
    private let setup: CurlEasySetup
    private let inbox = Mutex(Inbox())
    private let inFlight = Atomic<Int>(0)
    private var active: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [UnsafeMutableRawPointer] = []
    /// Idle handles kept for reuse; more are freed.
    private let idleHandleLimit = 256

    /// Creates the multi handle and starts the thread; `nil` when libcurl cannot
    /// initialize.
    init?(configuration: CurlTransport.Configuration) {
        guard CurlLibrary.isInitialized, let multi = curl_multi_init() else { return nil }
        self.multi = multi
        setup = CurlEasySetup(configuration: configuration)
        _ = moments_curl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, max(0, configuration.maximumConnectionsPerHost))
        _ = moments_curl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, max(0, configuration.maximumConnections))
        // Keep as many idle connections as may be open, so none is closed only to be reopened.
        let cacheSize = max(configuration.maximumConnections, configuration.maximumConnectionsPerHost * 4, 16)
        _ = moments_curl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, cacheSize)
        let thread = Thread { [self] in run() }
        thread.name = "MomentsCurl.CurlTransport"
        thread.start()
    }

    /// Transfers submitted and not yet answered.
    var requestsInFlight: Int { inFlight.load(ordering: .relaxed) }

    func submit(_ transfer: CurlTransfer) {
        inFlight.add(1, ordering: .relaxed)
        inbox.withLock { $0.added.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Asks the loop to abandon `transfer` (already answered by the caller's side).
    func cancel(_ transfer: CurlTransfer) {
        inbox.withLock { $0.cancelled.append(transfer) }
        curl_multi_wakeup(multi)
    }

    /// Ends the loop; transfers still running are answered as cancelled.
    func stop() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
    }

    // MARK: The loop's thread

    private func run() {
        var running: Int32 = 0
        while true {
            let (added, cancelled, stopping) = inbox.withLock { inbox in
                defer { inbox.added.removeAll(keepingCapacity: true); inbox.cancelled.removeAll(keepingCapacity: true) }
                return (inbox.added, inbox.cancelled, inbox.stopping)
            }
            for transfer in added { begin(transfer) }
            for transfer in cancelled {
                if let easy = transfer.easy, active[easy] === transfer { end(transfer, easy) }
            }
            if stopping { break }
            _ = curl_multi_perform(multi, &running)
            answerFinishedTransfers()
            _ = curl_multi_poll(multi, nil, 0, 10_000, nil)
        }
        for (easy, transfer) in active {
            transfer.finish(.failure(.cancelled()))
            end(transfer, easy)
        }
        for easy in idleHandles { curl_easy_cleanup(easy) }
        idleHandles.removeAll()
        curl_multi_cleanup(multi)
    }

    private func begin(_ transfer: CurlTransfer) {
        guard !transfer.isFinished else {
            inFlight.subtract(1, ordering: .relaxed)
            return
        }
        guard let easy = idleHandles.popLast() ?? curl_easy_init() else {
            transfer.finish(.failure(.transportFailure(TransportFailure(kind: .other, message: "libcurl could not create a handle"))))
            inFlight.subtract(1, ordering: .relaxed)
            return
        }
        transfer.easy = easy
        if let failure = setup.apply(to: easy, for: transfer) {
            transfer.finish(.failure(failure))
            release(transfer, easy)
            return
        }
        let added = curl_multi_add_handle(multi, easy)
        guard added == CURLM_OK else {
            let said = String(cString: curl_multi_strerror(added))
            transfer.finish(.failure(.transportFailure(TransportFailure(kind: .other, message: "libcurl refused the transfer: \(said)"))))
            release(transfer, easy)
            return
        }
        active[easy] = transfer
    }

    private func answerFinishedTransfers() {
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                  let transfer = active[easy] else { continue }
            transfer.complete(moments_curl_message_result(message))
            end(transfer, easy)
        }
    }

    /// Takes a transfer's handle out of the multi handle and keeps it for reuse.
    private func end(_ transfer: CurlTransfer, _ easy: UnsafeMutableRawPointer) {
        active[easy] = nil
        curl_multi_remove_handle(multi, easy)
        release(transfer, easy)
    }

    private func release(_ transfer: CurlTransfer, _ easy: UnsafeMutableRawPointer) {
        curl_slist_free_all(transfer.headerList)
        transfer.headerList = nil
        transfer.easy = nil
        if idleHandles.count < idleHandleLimit {
            curl_easy_reset(easy)
            idleHandles.append(easy)
        } else {
            curl_easy_cleanup(easy)
        }
        inFlight.subtract(1, ordering: .relaxed)
    }
}

/// libcurl's process-wide initialization, done once.
enum CurlLibrary {
    static let isInitialized: Bool = moments_curl_global_init() == CURLE_OK
}
