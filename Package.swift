// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "Moments",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "MomentsNetworking", targets: ["MomentsNetworking"]),
        .library(name: "Moments", targets: ["Moments"]),
        .library(name: "MomentsSQLite", targets: ["MomentsSQLite"]),
        .library(name: "MomentsCurl", targets: ["MomentsCurl"]),
        .library(name: "MomentsPostgres", targets: ["MomentsPostgres"]),
        .executable(name: "moments", targets: ["MomentsCLI"]),
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
        .target(name: "MomentsNetworking", dependencies: ["MomentsSupport"]),
        .target(name: "Moments", dependencies: ["MomentsNetworking", "MomentsSupport"]),
        .systemLibrary(
            name: "MomentsCSQLite",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .systemLibrary(
            name: "MomentsCCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]
        ),
        .target(name: "MomentsCurl", dependencies: ["MomentsNetworking", "MomentsCCurl", "MomentsSupport"]),
        .systemLibrary(
            name: "MomentsCPostgres",
            pkgConfig: "libpq",
            providers: [.apt(["libpq-dev"]), .brew(["libpq"])]
        ),
        .target(name: "MomentsPostgres", dependencies: ["Moments", "MomentsNetworking", "MomentsCPostgres", "MomentsSupport"]),
        .target(name: "MomentsSQLite", dependencies: ["Moments", "MomentsNetworking", "MomentsCSQLite", "MomentsSupport"]),
        .target(
            name: "MomentsCommandLine",
            dependencies: [
                "Moments", "MomentsSQLite", "MomentsNetworking", "MomentsSupport",
                .target(name: "MomentsCurl", condition: .when(traits: ["Curl"])),
                .target(name: "MomentsPostgres", condition: .when(traits: ["Postgres"])),
            ]
        ),
        .executableTarget(name: "MomentsCLI", dependencies: ["MomentsCommandLine"]),
        .target(name: "MomentsCurlBaseline", dependencies: ["MomentsCCurl"], path: "Benchmarks/CurlBaseline"),
        .executableTarget(
            name: "MomentsBenchmarks",
            dependencies: [
                "Moments", "MomentsSQLite", "MomentsNetworking", "MomentsCSQLite", "MomentsCurl", "MomentsCurlBaseline",
                "MomentsPostgres", "MomentsCPostgres", "MomentsTestSupport", "MomentsSupport",
            ],
            path: "Benchmarks/MomentsBenchmarks"
        ),
        .target(name: "MomentsTestSupport", dependencies: ["MomentsNetworking", "Moments", "MomentsSupport"], path: "Tests/MomentsTestSupport"),
        .executableTarget(
            name: "MomentsTransferProbe",
            dependencies: ["MomentsNetworking", "MomentsCurl"],
            path: "Tests/MomentsTransferProbe"
        ),
        .executableTarget(
            name: "MomentsCrashWriter",
            dependencies: ["Moments", "MomentsSQLite", "MomentsTestSupport"],
            path: "Tests/MomentsCrashWriter"
        ),
        .testTarget(name: "MomentsNetworkingTests", dependencies: ["MomentsNetworking", "MomentsTestSupport"]),
        .testTarget(
            name: "MomentsTransportTests",
            dependencies: ["MomentsNetworking", "MomentsCurl", "MomentsSupport", "MomentsTestSupport", "MomentsTransferProbe"]
        ),
        .testTarget(name: "MomentsTests", dependencies: ["Moments", "MomentsSupport", "MomentsTestSupport", "MomentsCrashWriter"]),
        .testTarget(
            name: "MomentsSQLiteTests",
            dependencies: ["MomentsSQLite", "MomentsCSQLite", "MomentsNetworking", "MomentsTestSupport", "MomentsCrashWriter"]
        ),
        .testTarget(name: "MomentsPostgresTests", dependencies: ["MomentsPostgres", "Moments", "MomentsSupport", "MomentsTestSupport"]),
        .testTarget(name: "MomentsIntegrationTests", dependencies: ["Moments", "MomentsSQLite", "MomentsTestSupport", "MomentsNetworking", "MomentsSupport"]),
        .testTarget(
            name: "MomentsCommandLineTests",
            dependencies: ["MomentsCommandLine", "MomentsCLI", "MomentsTestSupport", "Moments", "MomentsSQLite", "MomentsCSQLite", "MomentsNetworking"]
        ),
    ]
)

// Strictness is turned on once, for every target that compiles Swift.
for target in package.targets where target.type != .system {
    target.swiftSettings = (target.swiftSettings ?? []) + [
        .swiftLanguageMode(.v6),
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("InternalImportsByDefault"),
        // A module's members are visible only where it is imported: an undeclared
        // dependency fails to compile instead of leaking in through another module.
        .enableUpcomingFeature("MemberImportVisibility"),
    ]
}
