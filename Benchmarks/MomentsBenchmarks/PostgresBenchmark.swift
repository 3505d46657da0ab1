import Foundation
import Moments
import MomentsCPostgres
import MomentsPostgres
import MomentsTestSupport
import MomentsSupport

/// `PostgresPersistence` beside raw libpq calls (prepared statements, one transaction,
/// arrays through `unnest`) writing and reading the same rows of the same schema, on a
/// private PostgreSQL server started for the run; and how long a like made through one
/// store takes to reach a subscriber of another store on the same database.
enum PostgresBenchmark {
    static func run() async throws -> [Row] {
        let server = try await PostgresServer.shared()
        var rows: [Row] = []
        for count in [100, 10_000] {
            let details = BenchmarkData.timeline(moments: count)
            let sdk = try await PostgresPersistence(connectionString: try await server.createDatabase())
            let baselineDatabase = try await server.createDatabase()
            // The SDK creates the schema; the baseline then writes the same tables itself.
            _ = try await PostgresPersistence(connectionString: baselineDatabase)
            let raw = try RawPostgres(connectionString: baselineDatabase)
            let prepared = try RawPostgres.Rows(details)
            let saves = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { try await sdk.save(details, for: "0"); return count } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.save(prepared, for: "0"); return count } }
            )
            rows.append(Harness.row("PostgreSQL save, \(count) moments", unit: "rows/s", saves, target: 0.50))
            let loads = try await Harness.compare(
                sdk: { try await Harness.rate(for: Harness.roundDuration) { _ = try await sdk.load(userID: "0"); return count } },
                baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.load("0"); return count } }
            )
            rows.append(Harness.row("PostgreSQL load, \(count) moments", unit: "rows/s", loads, target: nil, note: "report only"))
            if count == 10_000 {
                var liked = details.moments[5_000]
                liked.likes = (liked.likes ?? []) + [Moment.LikedUser(id: "0", avatar: details.userDetails.avatar)]
                let likedValue = try RawPostgres.json(liked)
                let likes = try await Harness.compare(
                    sdk: { try await Harness.rate(for: Harness.roundDuration) { try await sdk.save(PersistenceBatch(moments: [liked])); return 1 } },
                    baseline: { try await Harness.rate(for: Harness.roundDuration) { try raw.update(id: liked.id, value: likedValue); return 1 } }
                )
                rows.append(Harness.row("PostgreSQL like (one row of 10,000)", unit: "likes/s", likes, target: nil,
                                        note: String(format: "%.0f µs per like", 1e6 / likes.sdk)))
            }
        }
        rows.append(try await propagation(server))
        return rows
    }

    /// A like through store A, until a subscriber of store B (another instance on the
    /// same database) shows it: A's answer, its write and `NOTIFY`, B's read of the rows,
    /// B's ordering rule, and the snapshot. Both stores use one service that answers at
    /// once from the state it keeps.
    static func propagation(_ server: PostgresServer) async throws -> Row {
        let database = try await server.createDatabase()
        let service = StatefulService(BenchmarkData.timeline(moments: 20))
        var stores: [MomentsStore] = []
        for _ in 0..<2 {
            let persistence = try await PostgresPersistence(connectionString: database)
            stores.append(MomentsStore(service: service, persistence: persistence, configuration: .init { $0.changeBus = persistence }))
        }
        for store in stores { try await store.refresh(userID: "0") }
        let clock = ContinuousClock()
        var latencies: [Double] = []
        let samples = Harness.isQuick ? 60 : 300
        var updates = await stores[1].updates(for: "0").makeAsyncIterator()
        _ = await updates.next()
        for sample in 0..<samples {
            let isLiked = sample % 2 == 0
            let start = clock.now
            try await stores[0].setLike(isLiked, momentID: "m1", userID: "0")
            while let details = await updates.next() {
                if details.moments[1].likes?.contains(where: { $0.id == "0" }) == isLiked { break }
            }
            latencies.append((clock.now - start).seconds * 1e3)
            await stores[1].waitUntilIdle()
        }
        latencies.sort()
        let p50 = latencies[latencies.count / 2]
        let p99 = latencies[min(latencies.count - 1, latencies.count * 99 / 100)]
        return Row(name: "PostgreSQL like → other instance's subscriber", unit: "ms (p50)", sdk: p50, baseline: nil, ratio: nil, target: nil,
                   note: String(format: "p99 %.2f ms over %d likes; target: within 200 ms", p99, samples))
    }
}

/// A server in memory: likes change what later answers hold.
actor StatefulService: MomentsService {
    private var details: MomentsDetails

    init(_ details: MomentsDetails) {
        self.details = details
    }

    func getMoments(userID: String) -> MomentsDetails {
        details
    }

    func updateLike(_ isLiked: Bool, momentID: String, fromUserID userID: String) -> MomentsDetails {
        if let index = details.moments.firstIndex(where: { $0.id == momentID }) {
            var likes = details.moments[index].likes ?? []
            likes.removeAll { $0.id == userID }
            if isLiked { likes.append(Moment.LikedUser(id: userID, avatar: details.userDetails.avatar)) }
            details.moments[index].likes = likes
            details.moments[index].isLiked = isLiked
        }
        return details
    }
}

/// The baseline: the SDK's tables, written and read with raw libpq calls.
final class RawPostgres {
    private let connection: OpaquePointer
    private var prepared: [String: String] = [:]

    /// A timeline's column values, encoded once up front (the baseline does no model work).
    struct Rows {
        var owner: String
        var ids: [String]
        var values: [String]

        init(_ details: MomentsDetails) throws {
            owner = try RawPostgres.json(details.userDetails)
            ids = details.moments.map(\.id)
            values = try details.moments.map { moment in
                var shared = moment
                shared.isLiked = nil
                return try RawPostgres.json(shared)
            }
        }
    }

    init(connectionString: String) throws {
        guard let connection = PQconnectdb(connectionString), PQstatus(connection) == CONNECTION_OK else {
            throw BenchmarkFailure("cannot connect to \(connectionString)")
        }
        PQsetNoticeProcessor(connection, { _, _ in }, nil)
        self.connection = connection
    }

    deinit {
        PQfinish(connection)
    }

    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(value), as: UTF8.self)
    }

    func save(_ rows: Rows, for user: String) throws {
        try execute("BEGIN")
        try run("INSERT INTO moments_timeline (user_id, owner) VALUES ($1, $2) ON CONFLICT (user_id) DO UPDATE SET owner = excluded.owner", [user, rows.owner])
        try run("DELETE FROM moments_timeline_entry WHERE user_id = $1", [user])
        try run("""
            INSERT INTO moments_timeline_entry (user_id, position, moment_id)
            SELECT $1, p - 1, m FROM unnest($2::text[]) WITH ORDINALITY AS t(m, p)
            """, [user, Self.array(rows.ids)])
        try run("""
            INSERT INTO moments_moment (id, value) SELECT * FROM unnest($1::text[], $2::json[])
            ON CONFLICT (id) DO UPDATE SET value = excluded.value
            """, [Self.array(rows.ids), Self.array(rows.values)])
        try execute("COMMIT")
    }

    func update(id: String, value: String) throws {
        try run("UPDATE moments_moment SET value = $2 WHERE id = $1", [id, value])
    }

    func load(_ user: String) throws {
        let result = try query("""
            SELECT t.owner, e.moment_id, e.is_liked, m.value FROM moments_timeline t
            JOIN moments_timeline_entry e ON e.user_id = t.user_id JOIN moments_moment m ON m.id = e.moment_id
            WHERE t.user_id = $1 ORDER BY e.position
            """, [user])
        defer { PQclear(result) }
        var texts = 0
        for row in 0..<PQntuples(result) {
            for column in 0..<4 where PQgetisnull(result, row, Int32(column)) == 0 {
                texts += String(cString: PQgetvalue(result, row, Int32(column))).utf8.count
            }
        }
        precondition(texts > 0)
    }

    private static func array(_ values: [String]) -> String {
        var text = "{"
        for (index, value) in values.enumerated() {
            if index > 0 { text += "," }
            text += "\""
            for scalar in value.unicodeScalars {
                if scalar == "\"" || scalar == "\\" { text += "\\" }
                text.unicodeScalars.append(scalar)
            }
            text += "\""
        }
        return text + "}"
    }

    private func execute(_ sql: String) throws {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchmarkFailure(String(cString: PQerrorMessage(connection))) }
    }

    private func run(_ sql: String, _ parameters: [String]) throws {
        PQclear(try query(sql, parameters))
    }

    /// The result, which the caller clears.
    private func query(_ sql: String, _ parameters: [String]) throws -> OpaquePointer? {
        let name: String
        if let known = prepared[sql] {
            name = known
        } else {
            name = "s\(prepared.count)"
            let result = PQprepare(connection, name, sql, Int32(parameters.count), nil)
            defer { PQclear(result) }
            guard PQresultStatus(result) == PGRES_COMMAND_OK else { throw BenchmarkFailure(String(cString: PQerrorMessage(connection))) }
            prepared[sql] = name
        }
        let copies = parameters.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let values = copies.map { UnsafePointer($0) }
        let result = values.withUnsafeBufferPointer { PQexecPrepared(connection, name, Int32(parameters.count), $0.baseAddress, nil, nil, 0) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            PQclear(result)
            throw BenchmarkFailure(String(cString: PQerrorMessage(connection)))
        }
        return result
    }
}
