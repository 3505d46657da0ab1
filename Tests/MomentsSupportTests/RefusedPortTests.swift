#if canImport(Glibc)
import Glibc
#endif
import MomentsTestSupport
import Testing

/// The port tests use for "nothing answers there" stays refused: no server can take it.
@Suite struct RefusedPortTests {
    @Test func noServerCanTakeTheRefusedPortAndConnectionsToItAreRefused() {
        let port = refusedLoopbackPort()
        #expect(refusedLoopbackPort() == port)

        let server = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(server) }
        var reuse: Int32 = 1
        setsockopt(server, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(server, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        #expect(bound == -1 && errno == EADDRINUSE, "a server took the refused port \(port)")
        #expect(!isListening(port))
    }
}
