import Foundation

/// A certificate authority, a server certificate for 127.0.0.1, ::1 and localhost, and a
/// client certificate, all made with `openssl` into a temporary directory when a test
/// asks (test keys, trusted by nothing else).
public struct TestCertificates: Sendable {
    public let directory: TemporaryDirectory
    public var authority: String { path("ca.pem") }
    public var serverCertificate: String { path("server.pem") }
    public var serverKey: String { path("server.key") }
    public var clientCertificate: String { path("client.pem") }
    public var clientKey: String { path("client.key") }
    /// The server key's public half, as libcurl's pin: `sha256//BASE64`.
    public let serverPin: String

    public static func make() async throws -> TestCertificates {
        let directory = try TemporaryDirectory()
        let dir = directory.url.path
        let extensions = directory.url.appendingPathComponent("server.ext")
        try Data("subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost\n".utf8).write(to: extensions)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Moments Test CA",
             "-keyout", "\(dir)/ca.key", "-out", "\(dir)/ca.pem"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "\(dir)/server.key",
             "-out", "\(dir)/server.csr"],
            ["x509", "-req", "-in", "\(dir)/server.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
             "-CAcreateserial", "-days", "2", "-extfile", extensions.path, "-out", "\(dir)/server.pem"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=moments-client", "-keyout", "\(dir)/client.key",
             "-out", "\(dir)/client.csr"],
            ["x509", "-req", "-in", "\(dir)/client.csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
             "-CAcreateserial", "-days", "2", "-out", "\(dir)/client.pem"],
            ["pkey", "-in", "\(dir)/server.key", "-pubout", "-outform", "DER", "-out", "\(dir)/server.pub.der"],
        ]
        for step in steps { try await openssl(step) }
        let digest = try await openssl(["dgst", "-sha256", "-binary", "\(dir)/server.pub.der"], output: true)
        return TestCertificates(directory: directory, serverPin: "sha256//" + digest.base64EncodedString())
    }

    private func path(_ name: String) -> String { directory.url.appendingPathComponent(name).path }

    @discardableResult
    private static func openssl(_ arguments: [String], output: Bool = false) async throws -> Data {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        let stdout = Pipe()
        process.standardOutput = output ? stdout : FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output ? await stdout.fileHandleForReading.readToEndOffPool() : Data()
        let status = await process.exitStatus()
        guard status == 0 else {
            throw ScriptServerError(message: "openssl \(arguments.prefix(1).joined()) failed with status \(status)")
        }
        return data
    }
}
