/// The command line, parsed: a command, its options and flags, and nothing unknown.
///
/// `moments <command> [--option value | --option=value | --flag]…`. Two-word commands
/// (`cache clear`) are matched first. Every option must be declared by the command.
struct ParsedArguments: Equatable {
    var command: CommandSpec.Name
    var options: [String: String]
    var flags: Set<String>

    func option(_ name: String) -> String? { options[name] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// A command's name and what it accepts.
struct CommandSpec: Sendable {
    enum Name: String, CaseIterable, Sendable {
        case demo, timeline, like, unlike, watch, cacheClear = "cache clear", help

        /// Whether an interrupt stops the command gracefully, and it then succeeds: a
        /// command that runs until interrupted, and the demo.
        var stopsGracefully: Bool { self == .watch || self == .demo }
    }

    let name: Name
    let summary: String
    /// Options taking a value, with their help text.
    let options: [(name: String, help: String)]
    /// Flags, with their help text.
    let flags: [(name: String, help: String)]
    /// Options that must be given.
    let required: Set<String>
}

/// A wrong command line; printed as one line, exit status 2.
struct UsageError: Error, Equatable, CustomStringConvertible {
    let message: String
    var description: String { message }
}

enum ArgumentParser {
    static func parse(_ arguments: [String], commands: [CommandSpec]) throws(UsageError) -> ParsedArguments {
        var rest = arguments[...]
        guard let first = rest.first else { throw UsageError(message: "no command given; try 'moments help'") }
        if first == "--help" || first == "-h" { return ParsedArguments(command: .help, options: [:], flags: []) }

        let spec: CommandSpec
        if rest.count >= 2, let two = commands.first(where: { $0.name.rawValue == "\(first) \(rest[rest.startIndex + 1])" }) {
            spec = two
            rest = rest.dropFirst(2)
        } else if let one = commands.first(where: { $0.name.rawValue == first }) {
            spec = one
            rest = rest.dropFirst()
        } else {
            throw UsageError(message: "unknown command '\(first)'; try 'moments help'")
        }

        var parsed = ParsedArguments(command: spec.name, options: [:], flags: [])
        while let argument = rest.popFirst() {
            if argument == "--help" || argument == "-h" {
                parsed.flags.insert("help")
                continue
            }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                throw UsageError(message: "unexpected argument '\(argument)' for '\(spec.name.rawValue)'")
            }
            var name = String(argument.dropFirst(2))
            var value: String?
            if let equals = name.firstIndex(of: "=") {
                value = String(name[name.index(after: equals)...])
                name = String(name[..<equals])
            }
            if spec.flags.contains(where: { $0.name == name }) {
                guard value == nil else { throw UsageError(message: "--\(name) takes no value") }
                parsed.flags.insert(name)
            } else if spec.options.contains(where: { $0.name == name }) {
                if value == nil {
                    guard let next = rest.popFirst(), !next.hasPrefix("--") else {
                        throw UsageError(message: "--\(name) needs a value")
                    }
                    value = next
                }
                guard let value, !value.isEmpty else { throw UsageError(message: "--\(name) needs a value") }
                if let earlier = parsed.options[name], earlier != value {
                    throw UsageError(message: "--\(name) is given twice ('\(earlier)' and '\(value)'); pass it once")
                }
                parsed.options[name] = value
            } else {
                throw UsageError(message: "unknown option --\(name) for '\(spec.name.rawValue)'")
            }
        }
        if !parsed.has("help") {
            for name in spec.required.sorted() where parsed.options[name] == nil {
                throw UsageError(message: "'\(spec.name.rawValue)' needs --\(name)")
            }
        }
        return parsed
    }

    /// The help text of one command.
    static func help(for spec: CommandSpec) -> String {
        var lines = ["usage: moments \(spec.name.rawValue)" + spec.options.map { spec.required.contains($0.name) ? " --\($0.name) <value>" : "" }.joined() + " [options]", "", spec.summary]
        let entries = spec.options.map { ("--\($0.name) <value>", $0.help) } + spec.flags.map { ("--\($0.name)", $0.help) } + [("--help", "show this help")]
        if !entries.isEmpty {
            lines.append("")
            lines.append("options:")
            let width = entries.map(\.0.count).max() ?? 0
            for (name, help) in entries {
                lines.append("  " + name + String(repeating: " ", count: width - name.count + 2) + help)
            }
        }
        return lines.joined(separator: "\n")
    }
}
