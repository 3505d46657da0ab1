public import Foundation

/// A private PostgreSQL server for tests, made from the Debian packages (`postgresql`):
/// `initdb` into a temporary directory, `pg_ctl start` on a free loopback port with its
/// socket in that directory, trust authentication for the user `moments`.
///
/// PostgreSQL refuses to run as root; as root the server runs as the `postgres` user
/// the package creates. One server serves a whole test process (``shared()``); each
/// test takes a database of its own (``createDatabase()``). A watchdog process stops
/// the server and removes the directory when the test process ends, however it ends.
///
/// One role, ``passwordRole``, must log in with a password over TCP (SCRAM), for tests
/// of refused credentials; every other role is trusted.
public final class PostgresServer: Sendable {
    /// Why the server could not start.
    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public let port: Int
    public let directory: URL
    private let binaries: URL
    private let owner: String?

    private static let startup = Task { try await PostgresServer.start() }

    /// The test process's server, started on first use.
    public static func shared() async throws -> PostgresServer {
        try await startup.value
    }

    private init(port: Int, directory: URL, binaries: URL, owner: String?) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.owner = owner
    }

    /// The role that must give its password (``password``), over TCP.
    public static let passwordRole = "moments_password"
    /// ``passwordRole``'s password.
    public static let password = "correct horse battery staple"

    /// A connection string for `database` over TCP on loopback.
    public func connectionString(database: String) -> String {
        "host=127.0.0.1 port=\(port) dbname=\(database) user=moments connect_timeout=5"
    }

    /// Creates an empty database of a fresh name and returns its connection string.
    public func createDatabase() async throws -> String {
        let name = "moments_test_\(UUID().uuidString.prefix(8).lowercased())"
        try await sql("CREATE DATABASE \(name)")
        return connectionString(database: name)
    }

    /// Runs `statement` with `psql` against the `postgres` database.
    public func sql(_ statement: String, database: String = "postgres") async throws {
        let output = try await Self.run(binaries.appendingPathComponent("psql"), [
            "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", "\(port)", "-U", "moments", "-d", database, "-c", statement,
        ], as: nil)
        guard output.status == 0 else { throw StartFailure(description: "psql \(statement): \(output.text)") }
    }

    /// Ends every connection to `database` but the caller's (`pg_terminate_backend`),
    /// as a crash or a network cut would.
    public func terminateConnections(to database: String) async throws {
        try await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(database)' AND pid <> pg_backend_pid()")
    }

    // MARK: - Starting

    private static func start() async throws -> PostgresServer {
        guard let binaries = findBinaries() else {
            throw StartFailure(description: "PostgreSQL's server programs were not found under /usr/lib/postgresql (Debian package `postgresql`; .ci/run installs it)")
        }
        let directory = try TemporaryDirectory().url
        let owner: String? = getuid() == 0 ? "postgres" : nil
        if let owner {
            let chown = try await run(URL(fileURLWithPath: "/bin/chown"), ["-R", owner, directory.path], as: nil)
            guard chown.status == 0 else { throw StartFailure(description: "chown: \(chown.text)") }
        }
        let data = directory.appendingPathComponent("data").path
        let initdb = try await run(binaries.appendingPathComponent("initdb"), [
            "-D", data, "-U", "moments", "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync",
        ], as: owner)
        guard initdb.status == 0 else { throw StartFailure(description: "initdb failed: \(initdb.text)") }
        // Rules are matched in order: the password role's comes first.
        let rules = URL(fileURLWithPath: data).appendingPathComponent("pg_hba.conf")
        let trusted = (try? String(contentsOf: rules, encoding: .utf8)) ?? ""
        try ("host all \(passwordRole) 127.0.0.1/32 scram-sha-256\n" + trusted).write(to: rules, atomically: false, encoding: .utf8)
        let port = unusedLoopbackPort()
        let options = "-p \(port) -k \(directory.path) -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        let start = try await run(binaries.appendingPathComponent("pg_ctl"), [
            "-D", data, "-o", options, "-l", directory.appendingPathComponent("server.log").path, "-w", "-t", "60", "start",
        ], as: owner)
        guard start.status == 0 else {
            let log = (try? String(contentsOf: directory.appendingPathComponent("server.log"), encoding: .utf8)) ?? ""
            throw StartFailure(description: "pg_ctl start failed: \(start.text)\n\(log)")
        }
        try startWatchdog(binaries: binaries, data: data, directory: directory, owner: owner)
        let server = PostgresServer(port: port, directory: directory, binaries: binaries, owner: owner)
        try await server.sql("CREATE ROLE \(passwordRole) LOGIN SUPERUSER PASSWORD '\(password)'")
        return server
    }

    private static func findBinaries() -> URL? {
        let root = URL(fileURLWithPath: "/usr/lib/postgresql")
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return versions.compactMap(Int.init).sorted(by: >).lazy
            .map { root.appendingPathComponent("\($0)/bin") }
            .first { FileManager.default.isExecutableFile(atPath: $0.appendingPathComponent("initdb").path) }
    }

    /// Stops the server once this process is gone.
    private static func startWatchdog(binaries: URL, data: String, directory: URL, owner: String?) throws {
        let stop = [binaries.appendingPathComponent("pg_ctl").path, "-D", data, "-m", "immediate", "stop"]
        let stopCommand = (owner.map { ["/sbin/runuser", "-u", $0, "--"] } ?? []) + stop
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(stopCommand.map { "'\($0)'" }.joined(separator: " ")) >/dev/null 2>&1
            rm -rf '\(directory.path)'
            """
        _ = try spawn(["/bin/sh", "-c", script], output: "/dev/null")
    }

    /// Starts `command` with its output in the file `output` and no other descriptor of
    /// this process: a server it starts must not hold, say, the pipe whose end tells a
    /// test's reference BFF to exit.
    private static func spawn(_ command: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        closeEveryOtherDescriptor(&actions)
        var environment = ProcessInfo.processInfo.environment
        environment["LLVM_PROFILE_FILE"] = "/dev/null"
        let argv = command.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, command[0], &actions, nil, argv, envp)
        guard spawned == 0 else { throw StartFailure(description: "cannot start \(command[0]): error \(spawned)") }
        return pid
    }

    /// Has the child close every descriptor above 2. Tests open pipes on other threads
    /// all the time, so a list of this process's descriptors taken before the spawn could
    /// miss one: glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later,
    /// looked up at run time because Swift's Glibc module does not declare it) closes
    /// them in the child itself; older systems get the list.
    private static func closeEveryOtherDescriptor(_ actions: inout posix_spawn_file_actions_t) {
        typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>?, Int32) -> Int32
        if let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") {
            let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
            if addCloseFrom(&actions, 3) == 0 { return }
        }
        let open = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).compactMap(Int32.init)
        for descriptor in open where descriptor > 2 && fcntl(descriptor, F_GETFD) != -1 {
            posix_spawn_file_actions_addclose(&actions, descriptor)
        }
    }

    /// Runs `program` to its end (as `owner` through `runuser` if given) and returns its
    /// status and output. It spawns and reaps the child itself on a thread of its own:
    /// Foundation's `Process` can miss the exit of a `runuser` whose grandchild (the
    /// server `pg_ctl` starts) lives on, and then spins forever.
    private static func run(_ program: URL, _ arguments: [String], as owner: String?) async throws -> (status: Int32, text: String) {
        let command = owner.map { ["/sbin/runuser", "-u", $0, "--", program.path] + arguments } ?? [program.path] + arguments
        let outputPath = FileManager.default.temporaryDirectory.appendingPathComponent("moments-postgres-\(UUID().uuidString).log").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        let pid = try spawn(command, output: outputPath)
        let status = await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                // WIFEXITED / WEXITSTATUS, spelled out (they are C macros).
                continuation.resume(returning: status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f))
            }.start()
        }
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        return (status, text)
    }
}
