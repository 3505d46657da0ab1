import Foundation
import Moments
import MomentsNetworking
import MomentsSQLite
import MomentsObservability
import MomentsCaching
import MomentsHTTP

/// The `moments` tool: parses the command line, runs the command, and returns the exit
/// status (0 success, 1 failure, 2 wrong usage). Every failure is one line on stderr.
public enum MomentsCommandLine {
    /// Runs the tool with `arguments` (without the program name) and returns the exit status: 0 success, 1 failure, 2 wrong usage, 130 interrupted.
    public static func run(_ arguments: [String]) async -> Int32 {
        Interrupts.installOnce()
        return await run(arguments, environment: ProcessInfo.processInfo.environment, console: Console())
    }

    /// Whether the command of `arguments` (without the program name) stops gracefully
    /// when interrupted (`watch`, `demo`), for ``Interrupts/installOnce(stoppingGracefully:)``.
    public static func stopsGracefully(_ arguments: [String]) -> Bool {
        guard let first = arguments.first, let name = CommandSpec.Name(rawValue: first) else { return false }
        return name.stopsGracefully && !arguments.contains("--help") && !arguments.contains("-h")
    }

    /// The tool's version (see CHANGELOG.md).
    static let version = "0.1.0"

    static func run(_ arguments: [String], environment: [String: String], console: Console) async -> Int32 {
        if let status = answerVersionOrHelp(arguments, console: console) { return status }
        let parsed: ParsedArguments
        do {
            parsed = try ArgumentParser.parse(arguments, commands: Commands.all)
        } catch {
            console.problem("moments: \(error.message)")
            return 2
        }
        if parsed.command == .help {
            console.line(Commands.overview)
            return 0
        }
        if parsed.has("help") {
            console.line(ArgumentParser.help(for: Commands.spec(parsed.command)))
            return 0
        }
        let location = parsed.command == .demo ? nil : try? parsed.option("store").map { try StoreLocation.parse($0) } ?? .default
        let newFiles = location?.filesNotYetCreated ?? []
        func removeNewFiles() {
            for path in newFiles where FileManager.default.fileExists(atPath: path) { try? FileManager.default.removeItem(atPath: path) }
        }
        let observing = Observing(parsed, environment: environment, console: console)
        // Printed at the end, whatever the outcome.
        defer { if let metrics = observing.metrics { console.problem(metrics.render().trimmingCharacters(in: .newlines)) } }
        do {
            try await Observing.$current.withValue(observing) {
                try await TraceContext.withValue(observing.trace) {
                    if parsed.command.stopsGracefully {
                        try await performStoppingGracefully(parsed, environment: environment, console: console)
                    } else {
                        try await perform(parsed, environment: environment, console: console)
                    }
                }
            }
            return 0
        } catch let error as UsageError {
            removeNewFiles()
            console.problem("moments: \(error.message)")
            return 2
        } catch {
            removeNewFiles()
            // An interrupted command fails because its clean-up stopped what it used.
            if let signal = Interrupts.signal { return Interrupts.status(for: signal) }
            console.problem("moments: \(describe(error, verbose: parsed.has("verbose")))")
            return 1
        }
    }

    /// Answers `--version`, `moments help <command>` and `moments <group> [--help]`
    /// before any parsing; `nil` for every other command line.
    private static func answerVersionOrHelp(_ arguments: [String], console: Console) -> Int32? {
        if arguments == ["--version"] || arguments == ["version"] {
            console.line("moments \(version)")
            return 0
        }
        if arguments.first == "help", arguments.count > 1 {
            return help(for: Array(arguments.dropFirst()).filter { $0 != "--help" && $0 != "-h" }, console: console)
        }
        if let first = arguments.first, Commands.all.contains(where: { $0.name.rawValue.hasPrefix(first + " ") }),
           arguments.count == 1 || ["--help", "-h"].contains(arguments[1]) {
            return help(for: [first], console: console)
        }
        return nil
    }

    /// Runs a command that an interrupt stops gracefully (`watch`, `demo`): in a task
    /// the interrupt cancels, so the command shuts its store and client down and
    /// returns; stopped so, it succeeds.
    private static func performStoppingGracefully(_ parsed: ParsedArguments, environment: [String: String], console: Console) async throws {
        let command = Task { try await perform(parsed, environment: environment, console: console) }
        let stop = Interrupts.stopGracefully { command.cancel() }
        defer { Interrupts.removeStop(stop) }
        do {
            try await withTaskCancellationHandler { try await command.value } onCancel: { command.cancel() }
        } catch where Interrupts.isStoppingGracefully {
            if parsed.command == .demo { console.problem("moments demo: interrupted; stopped cleanly") }
        }
    }

    /// Runs the parsed command.
    private static func perform(_ parsed: ParsedArguments, environment: [String: String], console: Console) async throws {
        switch parsed.command {
        case .demo: try await DemoCommand(console: console).run(parsed)
        case .timeline: try await timeline(parsed, environment: environment, console: console)
        case .like, .unlike: try await like(parsed, environment: environment, console: console)
        case .watch: try await watch(parsed, environment: environment, console: console)
        case .cacheClear: try await clearCache(parsed, environment: environment, console: console)
        case .help: break
        }
    }

    /// The help of the command named by `words` (`timeline`, `cache clear`), or of every
    /// command of a group (`cache`).
    private static func help(for words: [String], console: Console) -> Int32 {
        let name = words.joined(separator: " ")
        if let spec = Commands.all.first(where: { $0.name.rawValue == name }) {
            console.line(ArgumentParser.help(for: spec))
            return 0
        }
        let group = Commands.all.filter { $0.name.rawValue.hasPrefix(name + " ") }
        guard !name.isEmpty, !group.isEmpty else {
            console.problem("moments: unknown command '\(name)'; try 'moments help'")
            return 2
        }
        console.line(group.map { ArgumentParser.help(for: $0) }.joined(separator: "\n\n"))
        return 0
    }

    /// One line saying what went wrong and what to do, for people: no type names, no
    /// SQL. `verbose` adds the full detail.
    static func describe(_ error: any Error, verbose: Bool = false) -> String {
        var text: String
        if let error = error as? HTTPClientError {
            let target = error.url.map { HTTPClientError.redactedURL($0) } ?? "the BFF"
            // The status of the server's answer, with its standard text (`401 Unauthorized`).
            let code = error.statusCode ?? 0
            let status = code == 0 ? "a failure" : HTTPStatus.text(code)
            switch error.code {
            case .transportFailure:
                text = "cannot reach \(target): \(error.transportFailure?.description ?? error.reason)"
            case .serverError where code == 401 || code == 403:
                text = "the BFF answered \(status) at \(target); pass a valid token with --token TOKEN"
            case .serverError:
                text = "the BFF answered \(status) at \(target)"
            case .graphQLFailure:
                let said = "GraphQL errors: " + error.graphQLErrors.map(\.message).joined(separator: "; ")
                text = code == 0 || (200..<300).contains(code)
                    ? "the BFF at \(target) answered with \(said)"
                    : "the BFF answered \(status) at \(target), with \(said)"
            case .authenticationFailure:
                let refusal = code == 0 ? "" : "answered \(status) at \(target) and "
                text = "the BFF \(refusal)refused the token; pass a valid one with --token TOKEN"
            case .decodingFailure:
                text = "the BFF at \(target) answered something that is not a Moments timeline"
            case .redirectFailure:
                text = "the BFF redirected the request: \(error.reason)"
            default:
                text = "\(error.code) at \(target): \(error.reason)"
            }
            if verbose { text += " [\(error)]" }
        } else if let error = error as? PersistenceError {
            let reason = shortReason(error.reason)
            switch error.code {
            case _ where (error.underlyingError as? SQLiteError)?.isBusy == true:
                text = "the store at \(error.location) is in use by another process (\(reason)); try again, or pick another with --store"
            case .ioFailure: text = "cannot use the store at \(error.location): \(reason); check that it can be written, or pick another with --store"
            case .corruptedData: text = "the store at \(error.location) is damaged: \(reason); a refresh replaces a damaged timeline, or remove the file"
            case .unsupportedVersion: text = "the store at \(error.location) was written by a newer version of moments: \(reason)"
            case .connectionFailed: text = "cannot connect to the store at \(error.location): \(reason)"
            case .authenticationFailed: text = "the store at \(error.location) refused the credentials: \(reason); check the user and password in --store"
            case .connectionLost: text = "the connection to the store at \(error.location) was lost: \(reason); try again"
            default: text = "the store at \(error.location) failed: \(reason)"
            }
            if verbose { text += " [\(error)]" }
        } else {
            text = String(describing: error)
        }
        return text.split(whereSeparator: \.isNewline).joined(separator: " ")
    }

    /// A storage failure's reason without SQLite's codes and statements.
    private static func shortReason(_ reason: String) -> String {
        var text = reason
        if let range = text.range(of: " — while executing:") { text = String(text[..<range.lowerBound]) }
        if text.hasPrefix("SQLite error"), let colon = text.firstIndex(of: ":") {
            text = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        }
        return text
    }

    // MARK: - Commands

    private static func timeline(_ arguments: ParsedArguments, environment: [String: String], console: Console) async throws {
        let user = arguments.option("user") ?? ""
        let details: MomentsDetails
        if arguments.has("offline") {
            let location = try arguments.option("store").map { try StoreLocation.parse($0) } ?? .default
            let persistence = try await location.open().persistence
            let stored: MomentsDetails?
            do {
                stored = try await persistence.load(userID: user)
                await persistence.close()
            } catch {
                await persistence.close()
                throw error
            }
            guard let stored else {
                throw CommandFailure("no stored timeline for user \(user); run 'moments timeline --user \(user)' with a BFF first")
            }
            details = stored
        } else {
            // Shut down before printing: the store's writes finished and its storage closed.
            let connection = try await Connection(arguments, environment: environment)
            details = try await connection.run { try await connection.store.refresh(userID: user, source: connection.source) }
        }
        if arguments.has("json") {
            console.line(TimelineFormatter.json(details))
        } else {
            TimelineFormatter.text(details).forEach(console.line)
        }
    }

    private static func like(_ arguments: ParsedArguments, environment: [String: String], console: Console) async throws {
        let user = arguments.option("user") ?? ""
        let momentID = arguments.option("moment") ?? ""
        let isLiked = arguments.command == .like
        // A like is sent once: a failure says so, and the user decides whether to try again.
        let connection = try await Connection(arguments, environment: environment, sendsOnce: true)
        let details = try await connection.run {
            // A like the store could not record must not reach the BFF.
            try await connection.persistence.checkWritable()
            return try await connection.store.setLike(isLiked, momentID: momentID, userID: user)
        }
        guard let moment = details.moment(withID: momentID) else {
            throw CommandFailure("moment \(momentID) is not in user \(user)'s timeline")
        }
        if arguments.has("json") {
            console.line(TimelineFormatter.json(moment))
        } else {
            console.line("\(isLiked ? "liked" : "unliked") moment [\(momentID)] as user \(user):")
            TimelineFormatter.text(moment).forEach(console.line)
        }
    }

    private static func watch(_ arguments: ParsedArguments, environment: [String: String], console: Console) async throws {
        let watchesAll = arguments.has("all")
        let json = arguments.has("json")
        let user = arguments.option("user")
        guard watchesAll || user != nil else {
            throw UsageError(message: "'watch' needs --user ID, or --all to watch every user in the store")
        }
        var interval = Duration.seconds(10)
        if let text = arguments.option("interval") {
            guard let seconds = Double(text), seconds >= 0.1, seconds <= 86_400 else {
                throw UsageError(message: "--interval must be seconds between 0.1 and 86400, not '\(text)'")
            }
            interval = .milliseconds(Int(seconds * 1000))
        }
        let connection = try await Connection(arguments, environment: environment)
        var users = user.map { [$0] } ?? []
        if watchesAll {
            do {
                users = Array(Set(users).union(try await connection.persistence.userIDs())).sorted()
            } catch {
                await connection.shutdown()
                throw error
            }
            guard !users.isEmpty else {
                await connection.shutdown()
                throw CommandFailure("the store holds no timelines yet; pass --user ID to start with one")
            }
        }
        // The printer ends with the store's streams, once the store is shut down, having
        // printed the last state.
        let printer = json || watchesAll
            ? printChanges(connection.store, of: watchesAll ? nil : user, json: json, console: console)
            : await printTimeline(connection.store, of: user ?? "", console: console)
        let subject = watchesAll ? "\(users.count) user\(users.count == 1 ? "" : "s")" : "user \(user ?? "")"
        if !json { console.problem("watching \(subject) every \(interval); interrupt (Ctrl-C) to stop") }
        // Until the task is cancelled: an interrupt stops `watch` gracefully.
        watching: while !Task.isCancelled {
            for user in users {
                do {
                    try await connection.store.refresh(userID: user, source: connection.source)
                } catch is CancellationError {
                    break watching
                } catch {
                    console.problem("moments: refresh of user \(user) failed: \(describe(error))")
                }
            }
            do { try await Task.sleep(for: interval) } catch { break }
        }
        await connection.shutdown()
        await printer.value
        if !json { console.problem("stopped watching \(subject)") }
    }

    /// Prints `user`'s timeline, then what changed in each new version.
    private static func printTimeline(_ store: MomentsStore, of user: String, console: Console) async -> Task<Void, Never> {
        let updates = await store.updates(for: user)
        return Task {
            var previous: MomentsDetails?
            for await details in updates {
                if let before = previous {
                    let stamp = ISO8601DateFormatter().string(from: Date())
                    TimelineFormatter.changes(from: before, to: details).forEach { console.line("\(stamp) \($0)") }
                } else {
                    TimelineFormatter.text(details).forEach(console.line)
                }
                previous = details
            }
        }
    }

    /// Prints every change of the store (or only those concerning `user`), as JSON Lines
    /// or as text.
    private static func printChanges(_ store: MomentsStore, of user: String?, json: Bool, console: Console) -> Task<Void, Never> {
        let changes = store.changes()
        return Task {
            for await change in changes {
                // A gap concerns every user: the watcher must know it missed something.
                if let user, !change.userIDs.contains(user), !change.isGap { continue }
                if json {
                    console.line(ChangeFormatter.json(change, viewer: user))
                } else {
                    console.line("\(ISO8601DateFormatter().string(from: Date())) \(change)")
                }
            }
        }
    }

    private static func clearCache(_ arguments: ParsedArguments, environment: [String: String], console: Console) async throws {
        let directory = URL(fileURLWithPath: arguments.option("cache-dir") ?? Connection.cacheDirectory(environment))
        guard FileManager.default.fileExists(atPath: directory.path) else {
            console.line("the cache at \(directory.path) is already empty")
            return
        }
        let cache = try await DiskResponseCache.open(directory: directory)
        let count = await cache.count
        try await cache.clear()
        console.line("removed \(count) cached answer\(count == 1 ? "" : "s") from \(directory.path)")
    }
}

/// A command that could not do its job, said in one line.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
