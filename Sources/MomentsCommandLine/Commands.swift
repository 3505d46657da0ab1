import Foundation
/// Every command of `moments`, with its options.
enum Commands {
    static let connection: [(name: String, help: String)] = [
        ("base-url", "the BFF's base URL, e.g. http://127.0.0.1:8080 (default: $MOMENTS_BASE_URL)"),
        ("store", "where timelines are kept: sqlite:PATH | json:DIR | postgres:CONNECTION (shared with other instances) | memory (default: sqlite:moments.sqlite)"),
        ("token", "send this token as 'Authorization: Bearer <token>'"),
        ("timeout", "seconds allowed per call, every attempt and retry included, 0 to 3600 (default: 10)"),
        ("retries", "retries of a failed read, 0 to 10, within the timeout and the retry budget (default: 1); like and unlike are sent once"),
        ("cache-policy", "answer from the cache in .moments-cache: remote | local | local-or-remote | local-then-remote | remote-then-local (default: no cache)"),
    ] + TransportChoice.options
    static let json = (name: "json", help: "print machine-readable JSON")
    static let verbose = (name: "verbose", help: "print each request with its trace id, and the full detail of an error")
    static let metrics = (name: "metrics", help: "print the run's figures in Prometheus' text format at its end, on standard error")
    static let noHedge = (name: "no-hedge", help: "never send a slow read a second time")

    static let all: [CommandSpec] = [
        CommandSpec(
            name: .demo,
            summary: "Starts the reference BFF on a free loopback port and runs the whole story: fetch user 0's timeline into a SQLite store, like and unlike a moment while streaming updates, stop the BFF, and serve the timeline offline from the same file.",
            options: [("store", "the SQLite file to use: sqlite:PATH (default: a temporary file, removed afterwards)"), TransportChoice.options[0]],
            flags: [], required: []
        ),
        CommandSpec(
            name: .timeline, summary: "Fetches a user's timeline from the BFF, stores it, and prints it.",
            options: [("user", "the user's id")] + connection, flags: [json, ("offline", "print the stored timeline without asking the BFF"), verbose, noHedge, metrics],
            required: ["user"]
        ),
        CommandSpec(
            name: .like, summary: "Likes a moment as a user.",
            options: [("user", "the user's id"), ("moment", "the moment's id")] + connection, flags: [json, verbose, noHedge, metrics],
            required: ["user", "moment"]
        ),
        CommandSpec(
            name: .unlike, summary: "Unlikes a moment as a user.",
            options: [("user", "the user's id"), ("moment", "the moment's id")] + connection, flags: [json, verbose, noHedge, metrics],
            required: ["user", "moment"]
        ),
        CommandSpec(
            name: .watch,
            summary: "Prints a user's timeline, then every change, refreshing every interval, until interrupted. With --json, one JSON object per change (JSON Lines, with its sequence); with --all, the changes of every user in the store.",
            options: [("user", "the user's id (with --all: also watch this user)"), ("interval", "seconds between refreshes (default: 10)")] + connection,
            flags: [(name: "json", help: "print each change as one JSON object per line"), ("all", "watch every user whose timeline is in the store"), verbose, noHedge, metrics],
            required: []
        ),
        CommandSpec(
            name: .cacheClear, summary: "Removes the cached BFF answers kept in .moments-cache (or $MOMENTS_CACHE_DIR, or --cache-dir).",
            options: [("cache-dir", "the cache directory (default: $MOMENTS_CACHE_DIR, else .moments-cache)")], flags: [], required: []
        ),
        CommandSpec(name: .help, summary: "Lists the commands.", options: [], flags: [], required: []),
    ]

    static func spec(_ name: CommandSpec.Name) -> CommandSpec {
        all.first { $0.name == name } ?? all[all.count - 1]
    }

    static var overview: String {
        var lines = [
            "moments: the Moments SDK's command-line tool", "",
            "usage: moments <command> [options]", "", "commands:",
        ]
        let width = all.map(\.name.rawValue.count).max() ?? 0
        for spec in all {
            let summary = spec.summary.components(separatedBy: ". ").first ?? spec.summary
            lines.append("  " + spec.name.rawValue + String(repeating: " ", count: width - spec.name.rawValue.count + 2) + summary)
        }
        lines += ["", "'moments help <command>' (or 'moments <command> --help') describes a command's options;",
                  "'moments --version' prints the version.", "Start here: moments demo"]
        return lines.joined(separator: "\n")
    }
}
