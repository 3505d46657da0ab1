import Moments
import MomentsNetworking

// The code of the article "Running as a service" (Moments.docc/RunningAsAService.md),
// compiled against the stand-ins of ServiceLifecycleShapes.swift:
// `ServiceLifecycleTests` checks every code block of the article is here.

extension MomentsStore: Service {}
extension HTTPClient: Service {}

/// `wrapped` as a service a graceful shutdown stops: the shutdown cancels its run(),
/// which then shuts it down gracefully.
struct StoppingGracefully<Wrapped: Service>: Service {
    let wrapped: Wrapped

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await wrapped.run() }
    }
}

func runServer(client: HTTPClient, store: MomentsStore, logger: Logger) async throws {
    let group = ServiceGroup(
        services: [StoppingGracefully(wrapped: client), StoppingGracefully(wrapped: store)],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    try await group.run()
}

func stop(store: MomentsStore, client: HTTPClient) async {
    await store.shutdown(gracePeriod: .seconds(10))
    await client.shutdown(gracePeriod: .seconds(2))
}
