import Foundation
#if Curl
import MomentsCurl
#endif
import MomentsNetworking
import MomentsHTTP

/// Which transport the network commands use: `--transport curl|urlsession` (or
/// `$MOMENTS_TRANSPORT`), with `--ca-file PATH` for the curl transport. `--ca-file`
/// alone chooses curl; the default is URLSession.
enum TransportChoice: String, CaseIterable {
    case urlsession
    case curl

    static let options: [(name: String, help: String)] = [
        ("transport", "the HTTP transport: urlsession | curl (default: $MOMENTS_TRANSPORT, else urlsession)"),
        ("ca-file", "trust the certificate authorities in this PEM file (curl transport; implies --transport curl)"),
    ]

    static func make(_ arguments: ParsedArguments, environment: [String: String]) throws -> any HTTPTransport {
        let caFile = arguments.option("ca-file")
        let named = arguments.option("transport") ?? environment["MOMENTS_TRANSPORT"].flatMap { $0.isEmpty ? nil : $0 }
        let choice: TransportChoice
        if let named {
            guard let parsed = TransportChoice(rawValue: named.lowercased()) else {
                throw UsageError(message: "--transport must be urlsession or curl, not '\(named)'")
            }
            choice = parsed
        } else {
            choice = caFile == nil ? .urlsession : .curl
        }
        switch choice {
        case .urlsession:
            if caFile != nil {
                throw UsageError(message: "--ca-file needs the curl transport (URLSession on Linux cannot take a custom authority); add --transport curl")
            }
            return URLSessionTransport()
        case .curl:
            #if Curl
            var configuration = CurlTransport.Configuration()
            if let caFile {
                guard FileManager.default.isReadableFile(atPath: caFile) else {
                    throw UsageError(message: "--ca-file '\(caFile)' is not a readable file")
                }
                configuration.certificateAuthorityFile = caFile
            }
            return try CurlTransport(configuration: configuration)
            #else
            throw UsageError(message: "this moments was built without the curl transport (the Curl trait); build it with its default traits")
            #endif
        }
    }
}
