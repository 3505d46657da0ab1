import Moments
import MomentsTestSupport

/// A store over a fake service and in-memory persistence, with user "0" holding
/// moments a, b, c on the server (b liked by "1").
struct StoreFixture {
    let service = FakeMomentsService()
    let persistence: any MomentsPersistence
    let store: MomentsStore

    init(persistence: any MomentsPersistence = InMemoryPersistence(), configure: (inout MomentsStore.Configuration) -> Void = { _ in }) async {
        self.persistence = persistence
        store = MomentsStore(service: service, persistence: persistence, configuration: .init(configure: configure))
        await service.addUser("0", moments: ["a", "b", "c"], likedBy: ["b": ["1"]])
    }
}

/// A persistence whose writes fail, to prove errors are not swallowed.
actor FailingPersistence: MomentsPersistence {
    struct DiskFull: Error {}
    func load(userID: String) throws -> MomentsDetails? { nil }
    func save(_ batch: PersistenceBatch) throws {
        throw PersistenceError(code: .ioFailure, location: "/full", reason: "no space left on device", underlyingError: DiskFull())
    }
    func userIDs(holding momentID: String) -> [String] { [] }
    func remove(userID: String) {}
    func userIDs() -> [String] { [] }
    func removeAll() {}
    func checkWritable() {}
}

