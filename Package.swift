// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Moments",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MomentsObservability", targets: ["MomentsObservability"]),
        .library(name: "MomentsHTTP", targets: ["MomentsHTTP"]),
        .library(name: "MomentsNetworking", targets: ["MomentsNetworking"]),
        .library(name: "MomentsGraphQL", targets: ["MomentsGraphQL"]),
        .library(name: "MomentsCaching", targets: ["MomentsCaching"]),
        .library(name: "Moments", targets: ["Moments"]),
        .library(name: "MomentsBFF", targets: ["MomentsBFF"]),
        .library(name: "MomentsSQLite", targets: ["MomentsSQLite"]),
        .library(name: "MomentsCurl", targets: ["MomentsCurl"]),
        .library(name: "MomentsPostgres", targets: ["MomentsPostgres"]),
        .library(name: "MomentsTesting", targets: ["MomentsTesting"]),
        .executable(name: "moments", targets: ["MomentsLauncher"]),
        .executable(name: "MomentsBenchmarks", targets: ["MomentsBenchmarks"]),
    ],
    // The `moments` tool's optional back ends, on by default: a build without them
    // (`swift build --product moments --disable-default-traits`, or a dependency's
    // `traits: []`) needs neither libcurl's nor libpq's headers.
    traits: [
        .trait(name: "Curl", description: "The `moments` tool offers `--transport curl` (MomentsCurl, over libcurl)."),
        .trait(name: "Postgres", description: "The `moments` tool offers `--store postgres:` (MomentsPostgres, over libpq)."),
        .default(enabledTraits: ["Curl", "Postgres"]),
    ],
    targets: [
        .target(name: "MomentsSupport"),
        .target(name: "MomentsObservability", dependencies: ["MomentsSupport"]),
        .target(name: "MomentsHTTP", dependencies: ["MomentsSupport"]),
        .target(name: "MomentsNetworking", dependencies: ["MomentsHTTP", "MomentsObservability", "MomentsSupport"]),
        .target(name: "MomentsTesting", dependencies: ["MomentsHTTP", "MomentsGraphQL", "MomentsSupport"]),
        .target(name: "MomentsGraphQL", dependencies: ["MomentsHTTP", "MomentsSupport", "MomentsNetworking"]),
        .target(name: "MomentsCaching", dependencies: ["MomentsNetworking", "MomentsSupport"]),
        .target(name: "Moments", dependencies: ["MomentsHTTP", "MomentsObservability", "MomentsSupport"]),
        .target(name: "MomentsBFF", dependencies: ["Moments", "MomentsHTTP", "MomentsGraphQL", "MomentsNetworking", "MomentsObservability"]),
        .systemLibrary(
            name: "MomentsCSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "MomentsCCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(name: "MomentsCurl", dependencies: ["MomentsHTTP", "MomentsCCurl", "MomentsSupport"]),
        .systemLibrary(
            name: "MomentsCPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "MomentsPostgres", dependencies: ["Moments", "MomentsObservability", "MomentsCPostgres", "MomentsSupport"]),
        .target(name: "MomentsSQLite", dependencies: ["Moments", "MomentsObservability", "MomentsCSQLite", "MomentsSupport"]),
        .target(
            name: "MomentsCommandLine",
            dependencies: ["MomentsBFF", "MomentsHTTP", 
                "Moments", "MomentsSQLite", "MomentsNetworking", "MomentsCaching", "MomentsObservability", "MomentsSupport",
                .target(name: "MomentsCurl", condition: .when(traits: ["Curl"])),
                .target(name: "MomentsPostgres", condition: .when(traits: ["Postgres"])),
            ]
        ),
        // Blocks SIGINT and SIGTERM from the executable's first instant (see its header);
        // only the command-line program links it.
        .target(name: "MomentsCStartup"),
        .executableTarget(name: "MomentsCLI", dependencies: ["MomentsCommandLine", "MomentsCStartup"]),
        // The `moments` executable: a static launcher that blocks SIGINT and SIGTERM with
        // its first instruction, before MomentsCLI's dynamic loader spends 10 to 30 ms
        // mapping its libraries, then becomes MomentsCLI (see launcher.c). The plugin
        // only makes building `moments` build MomentsCLI beside it.
        .executableTarget(
            name: "MomentsLauncher",
            // Static, entered at `moments_launcher_entry`; linked by lld, since gold warns
            // that the static C library's `dlopen` (which nothing here calls) needs a
            // matching C library at run time.
            linkerSettings: [
                .unsafeFlags(
                    ["-static-executable", "-use-ld=lld", "-Xlinker", "--entry=moments_launcher_entry"],
                    .when(platforms: [.linux])
                ),
            ],
            plugins: ["BuildsMomentsCLI"]
        ),
        .plugin(name: "BuildsMomentsCLI", capability: .buildTool(), dependencies: ["MomentsCLI"]),
        .target(name: "MomentsCurlBaseline", dependencies: ["MomentsCCurl"], path: "Benchmarks/CurlBaseline"),
        .executableTarget(
            name: "MomentsBenchmarks",
            dependencies: ["MomentsBFF", "MomentsHTTP", 
                "Moments", "MomentsSQLite", "MomentsNetworking", "MomentsCaching", "MomentsObservability", "MomentsCSQLite", "MomentsCurl", "MomentsCurlBaseline",
                "MomentsPostgres", "MomentsCPostgres", "MomentsTestSupport", "MomentsSupport",
            ],
            path: "Benchmarks/MomentsBenchmarks"
        ),
        .target(name: "MomentsTestSupport", dependencies: ["MomentsHTTP", "MomentsNetworking", "Moments", "MomentsSupport", "MomentsTesting"], path: "Tests/MomentsTestSupport"),
        .target(name: "MomentsTestTraits", path: "Tests/MomentsTestTraits"),
        .executableTarget(
            name: "MomentsTransferProbe",
            dependencies: ["MomentsHTTP", "MomentsNetworking", "MomentsCurl"],
            path: "Tests/MomentsTransferProbe"
        ),
        .executableTarget(
            name: "MomentsCrashWriter",
            dependencies: ["Moments", "MomentsSQLite", "MomentsTestSupport"],
            path: "Tests/MomentsCrashWriter"
        ),
        // One test target per library target, named after it; tests that need several
        // libraries and real servers live in MomentsIntegrationTests.
        .testTarget(name: "MomentsSupportTests", dependencies: ["MomentsSupport", "MomentsTestSupport"]),
        .testTarget(name: "MomentsObservabilityTests", dependencies: ["MomentsObservability", "MomentsHTTP", "MomentsNetworking", "MomentsSupport", "MomentsTestSupport"]),
        .testTarget(name: "MomentsHTTPTests", dependencies: ["MomentsHTTP", "MomentsNetworking"]),
        .testTarget(name: "MomentsGraphQLTests", dependencies: ["MomentsGraphQL", "MomentsHTTP", "MomentsNetworking", "Moments", "MomentsTestSupport"]),
        .testTarget(name: "MomentsCachingTests", dependencies: ["MomentsCaching", "MomentsHTTP", "MomentsNetworking", "MomentsTestSupport"]),
        .testTarget(name: "MomentsBFFTests", dependencies: ["MomentsBFF", "Moments", "MomentsGraphQL", "MomentsHTTP", "MomentsNetworking", "MomentsTestSupport"]),
        .testTarget(name: "MomentsTestingTests", dependencies: ["MomentsBFF", "MomentsTesting", "Moments", "MomentsGraphQL", "MomentsHTTP", "MomentsNetworking", "MomentsSupport", "MomentsTestSupport"]),
        .testTarget(name: "MomentsNetworkingTests", dependencies: ["MomentsHTTP", "MomentsSupport", "MomentsNetworking", "MomentsCaching", "MomentsGraphQL", "MomentsObservability", "MomentsTestSupport", "MomentsTesting"]),
        .testTarget(
            name: "MomentsTransportTests",
            dependencies: ["MomentsBFF", "MomentsHTTP", "MomentsNetworking", "MomentsGraphQL", "MomentsCurl", "MomentsSupport", "MomentsTestSupport", "MomentsTransferProbe", "MomentsObservability"]
        ),
        .testTarget(name: "MomentsTests", dependencies: ["MomentsBFF", "MomentsHTTP", "MomentsNetworking", "Moments", "MomentsCaching", "MomentsGraphQL", "MomentsObservability", "MomentsSupport", "MomentsTestSupport", "MomentsCrashWriter", "MomentsTestTraits", "MomentsTesting"]),
        .testTarget(
            name: "MomentsSQLiteTests",
            dependencies: ["Moments", "MomentsSupport", "MomentsSQLite", "MomentsCSQLite", "MomentsNetworking", "MomentsObservability", "MomentsTestSupport", "MomentsCrashWriter", "MomentsTestTraits", "MomentsCaching"]
        ),
        .testTarget(name: "MomentsPostgresTests", dependencies: ["MomentsBFF", "MomentsNetworking", "MomentsPostgres", "Moments", "MomentsSupport", "MomentsTestSupport", "MomentsTestTraits"]),
        .testTarget(name: "MomentsIntegrationTests", dependencies: ["MomentsBFF", "MomentsHTTP", "Moments", "MomentsSQLite", "MomentsTestSupport", "MomentsTesting", "MomentsNetworking", "MomentsGraphQL", "MomentsCaching", "MomentsObservability", "MomentsSupport", "MomentsCurl"]),
        .testTarget(
            name: "MomentsCommandLineTests",
            // Not on MomentsCLI: linking it would put its start-up signal block into the
            // test process. `swift build --build-tests` and `swift test` build `moments` too.
            dependencies: ["MomentsBFF", "MomentsHTTP", "MomentsCommandLine", "MomentsTestSupport", "MomentsSupport", "Moments", "MomentsSQLite", "MomentsCSQLite", "MomentsNetworking"]
        ),
    ]
)

// Strictness is turned on once, for every target that compiles Swift.
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        // A module's members are visible only where it is imported: an undeclared
        // dependency fails to compile instead of leaking in through another module.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
