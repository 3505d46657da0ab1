@testable import MomentsCommandLine
import Testing

@Suite struct ArgumentParserTests {
    private func parse(_ line: String) throws(UsageError) -> ParsedArguments {
        try ArgumentParser.parse(line.split(separator: " ").map(String.init), commands: Commands.all)
    }

    @Test func optionsTakeValuesWithASpaceOrAnEqualsSign() throws {
        let parsed = try parse("timeline --user 0 --base-url=http://127.0.0.1:8080 --json")

        #expect(parsed.command == .timeline)
        #expect(parsed.options == ["user": "0", "base-url": "http://127.0.0.1:8080"])
        #expect(parsed.flags == ["json"])
    }

    @Test func twoWordCommandsAreRecognised() throws {
        #expect(try parse("cache clear").command == .cacheClear)
        #expect(try parse("cache clear --cache-dir /tmp/x").options["cache-dir"] == "/tmp/x")
    }

    @Test func helpIsAcceptedAnywhereAndWaivesRequiredOptions() throws {
        #expect(try parse("like --help").has("help"))
        #expect(try parse("--help").command == .help)
        #expect(try parse("help").command == .help)
    }

    @Test(arguments: [
        ("", "no command given; try 'moments help'"),
        ("frob", "unknown command 'frob'; try 'moments help'"),
        ("timeline", "'timeline' needs --user"),
        ("like --user 0", "'like' needs --moment"),
        ("timeline --user", "--user needs a value"),
        ("timeline --user --json", "--user needs a value"),
        ("timeline --user 0 --colour red", "unknown option --colour for 'timeline'"),
        ("timeline --user 0 extra", "unexpected argument 'extra' for 'timeline'"),
        ("timeline --user 0 --json=yes", "--json takes no value"),
        ("demo --user 0", "unknown option --user for 'demo'"),
    ])
    func wrongCommandLinesSayWhatIsWrong(line: String, message: String) {
        #expect(throws: UsageError(message: message)) { try parse(line) }
    }

    @Test func storeLocationsParse() throws {
        #expect(try StoreLocation.parse("sqlite:/var/m.sqlite") == .sqlite("/var/m.sqlite"))
        #expect(try StoreLocation.parse("json:data") == .json("data"))
        #expect(try StoreLocation.parse("memory") == .memory)
        #expect(try StoreLocation.parse("postgres:host=db dbname=moments") == .postgres("host=db dbname=moments"))
        #expect(try StoreLocation.parse("postgresql://app@db/moments") == .postgres("postgresql://app@db/moments"))
        #expect(try StoreLocation.parse("postgres://app@db/moments") == .postgres("postgres://app@db/moments"))
        #expect(throws: UsageError.self) { try StoreLocation.parse("postgres:") }
        #expect(throws: UsageError.self) { try StoreLocation.parse("mysql://x") }
        #expect(throws: UsageError.self) { try StoreLocation.parse("sqlite:") }
    }

    @Test func everyCommandHasHelpListingItsOptions() {
        for spec in Commands.all where spec.name != .help {
            let help = ArgumentParser.help(for: spec)
            #expect(help.hasPrefix("usage: moments \(spec.name.rawValue)"))
            for option in spec.options { #expect(help.contains("--\(option.name)")) }
        }
        #expect(Commands.overview.contains("demo"))
    }
}
