import Foundation
import Moments
import MomentsNetworking
import MomentsTestSupport
import Synchronization
import Testing
import MomentsSupport
import MomentsHTTP
import MomentsBFF

/// Requests through one client, 64 at a time, against the reference BFF with
/// faults in 5% of its answers: every request ends in a value or a typed error, and
/// nothing leaks. 2,000 by default; `MOMENTS_SOAK_REQUESTS` changes the count, and
/// `Scripts/soak.sh` runs 20,000 in a release build.
@Suite(.serialized) struct LoadSoakTests {
    /// Bounds on what may remain after the run.
    static let fileDescriptorSlack = 24
    static let residentGrowthLimit = 128 * 1024 * 1024

    @Test func everyRequestWithFaultsIsAccountedFor() async throws {
        let total = Int(ProcessInfo.processInfo.environment["MOMENTS_SOAK_REQUESTS"] ?? "") ?? 2_000
        let bff = try await ReferenceBFF(users: 20, momentsPerUser: 5)
        defer { bff.stop() }
        let transport = URLSessionTransport()
        let client = HTTPClient.patient(baseURL: bff.baseURL, transport: transport) {
            $0.timeout = .seconds(10)
            $0.coalescesRequests = false  // every request must reach the BFF
        }
        let service = GraphQLMomentsService(client: client)
        _ = try await service.getMoments(userID: "0")  // warm up: connections, caches
        let descriptorsBefore = ProcessResources.openFileDescriptors
        let residentBefore = ProcessResources.residentBytes
        try await bff.injectFault(["kind": "mixed", "rate": 0.05, "seed": 3])

        let tally = Tally()
        let started = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    while true {
                        let index = tally.nextIndex()
                        guard index < total else { return }
                        let user = index % 5 == 0 ? "0" : "user-\(index % 20 + 1)"
                        do {
                            let details = try await service.getMoments(userID: user)
                            tally.record { $0.values += details.userDetails.id == user ? 1 : 0 }
                        } catch let error as HTTPClientError {
                            tally.record { $0.errors[error.code, default: 0] += 1 }
                        } catch {
                            tally.record { $0.untyped += 1 }
                        }
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - started
        try await bff.clearFaults()
        let (values, errors, untyped) = tally.totals
        let failed = errors.values.reduce(0, +)

        #expect(values + failed == total, "every request is a value or a typed error")
        #expect(untyped == 0)
        #expect(Set(errors.keys).isSubset(of: [.serverError, .transportFailure, .decodingFailure, .graphQLFailure]), "\(errors)")
        #expect(Double(failed) / Double(total) > 0.02 && Double(failed) / Double(total) < 0.10, "about 5% faults: \(failed)")
        #expect(elapsed < .seconds(240))

        // Nothing left behind.
        #expect(await eventually { client.requestsInFlight == 0 && transport.requestsInFlight == 0 })
        #expect(await eventually { transport.pendingDeadlines == 0 })
        let descriptorsAfter = ProcessResources.openFileDescriptors
        let residentAfter = ProcessResources.residentBytes
        #expect(descriptorsAfter <= descriptorsBefore + Self.fileDescriptorSlack, "fds \(descriptorsBefore) → \(descriptorsAfter)")
        #expect(residentAfter - residentBefore < Self.residentGrowthLimit, "RSS \(residentBefore >> 20) → \(residentAfter >> 20) MiB")
        // The client still works after the storm.
        #expect(try await service.getMoments(userID: "0").moments.count == 4)
        print("soak: \(total) requests in \(elapsed), \(failed) typed errors \(errors), fds \(descriptorsBefore)→\(descriptorsAfter), RSS \(residentBefore >> 20)→\(residentAfter >> 20) MiB")
    }
}

/// Hands out request numbers and counts outcomes, shared by the load tasks.
final class Tally: Sendable {
    struct Counts {
        var values = 0
        var errors: [HTTPClientError.Code: Int] = [:]
        var untyped = 0
    }

    private let next = Atomic<Int>(0)
    private let counts = PThreadMutex(Counts())

    func nextIndex() -> Int { next.wrappingAdd(1, ordering: .relaxed).oldValue }
    func record(_ change: (inout Counts) -> Void) { counts.withLock { change(&$0) } }
    var totals: (Int, [HTTPClientError.Code: Int], Int) { counts.withLock { ($0.values, $0.errors, $0.untyped) } }
}
