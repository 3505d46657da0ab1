import Foundation
import Synchronization

/// Where the CLI writes: standard output for results, standard error for problems.
/// Tests capture both instead.
final class Console: Sendable {
    private let isCapturing: Bool
    private let captured = Mutex<(out: [String], err: [String])>(([], []))

    init(capturing: Bool = false) {
        isCapturing = capturing
    }

    func line(_ text: String = "") {
        guard !isCapturing else { return captured.withLock { $0.out.append(text) } }
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    func problem(_ text: String) {
        guard !isCapturing else { return captured.withLock { $0.err.append(text) } }
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    var output: [String] { captured.withLock { $0.out } }
    var problems: [String] { captured.withLock { $0.err } }
}
