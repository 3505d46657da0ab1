import Foundation
import MomentsSupport
import MomentsObservability
import MomentsHTTP

/// Sends one request through the transport, as the last stage: with what is left of
/// the attempt's deadline as its timeout (and in the deadline header, if the client sets
/// one), its trace headers, and header values checked the same way whatever the
/// transport.
///
/// What it does for every transport, whatever the transport did itself: a failure is an
/// `HTTPClientError`; the size limit is checked; an answer to a download that came back
/// in memory is written to the request's file; a transfer whose transport reported no
/// progress is told its whole exchange.
struct TransportStage: CallStage {
    let transport: any HTTPTransport
    let clock: any MomentsClock
    let deadlineHeader: String?
    let instruments: ClientInstruments

    nonisolated(nonsending) func send(_ request: HTTPRequest, _ call: Call, next: CallPipeline.Next) async throws -> HTTPResponse {
        let started = clock.now
        let (traced, span) = try prepared(request, call, at: started)
        let answer: Result<HTTPResponse, any Error>
        do {
            answer = .success(try await transport.send(traced))
        } catch {
            answer = .failure(error)
        }
        return try ended(traced, span: span, started: started, answer: answer)
    }

    /// The answer to `request` as the call gets it (checked, or written to its
    /// destination) or its failure as an `HTTPClientError`, with the attempt's span and
    /// figures ended. Apart from ``send(_:_:next:)``, so what it holds is not kept in the
    /// frame that waits for the transport.
    @inline(never)
    private func ended(_ request: HTTPRequest, span: (any MomentsSpan)?, started: ContinuousClock.Instant, answer: Result<HTTPResponse, any Error>) throws(HTTPClientError) -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try completed(answer.get(), of: request)
        } catch {
            let failure = Self.clientError(error)
            instruments.endAttempt(request, span: span, duration: clock.now - started, response: nil, error: failure)
            throw failure
        }
        instruments.endAttempt(request, span: span, duration: clock.now - started, response: response, error: nil)
        return response
    }

    /// `request` as it is sent at `started`: with the time left before the attempt's
    /// deadline as its timeout (and in the deadline header, if one is configured),
    /// checked, and traced. Apart from ``send(_:_:next:)``, so the copies it makes are not
    /// kept in the frame that waits for the transport.
    @inline(never)
    private func prepared(_ request: HTTPRequest, _ call: Call, at started: ContinuousClock.Instant) throws(HTTPClientError) -> (HTTPRequest, (any MomentsSpan)?) {
        let remaining = call.attemptDeadline - started
        guard remaining > .zero else { throw RetryStage.deadlinePassed(call, now: started) }
        var sent = request
        sent.timeout = remaining
        if let deadlineHeader { sent.headers[deadlineHeader] = String(remaining.milliseconds) }
        if let invalid = HeaderValidation.firstInvalidField(in: sent.headers) {
            throw HTTPClientError.invalidRequest("the header field \(invalid) holds a character no header may hold (CR, LF or NUL) or an invalid name")
        }
        return instruments.beginAttempt(consume sent, resend: call.context.attempt - 1)
    }

    /// `error` as the `HTTPClientError` the client reports.
    static func clientError(_ error: any Error) -> HTTPClientError {
        if let error = error as? HTTPClientError { return error }
        if Task.isCancelled || error is CancellationError { return .cancelled() }
        return .transportFailure(TransportFailure(kind: .other, message: String(describing: error)))
    }

    private func completed(_ response: HTTPResponse, of request: HTTPRequest) throws(HTTPClientError) -> HTTPResponse {
        if let limit = request.maximumResponseSize, response.body.count > limit {
            throw HTTPClientError.responseTooLarge(limit: limit, received: response.body.count)
        }
        TransferProgressReporter.current?.exchangeEnded(sent: request.bodyLength, received: Int64(response.body.count))
        guard let destination = request.destination, response.bodyFile == nil else { return response }
        var written = response
        try DownloadFile.write(response.body, to: destination)
        written.body = Data()
        written.bodyFile = destination
        return written
    }
}
