import Foundation

/// What this process holds, for leak checks.
public enum ProcessResources {
    /// Open file descriptors.
    public static var openFileDescriptors: Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Resident memory, in bytes.
    public static var residentBytes: Int {
        guard let value = status("VmRSS"), let kilobytes = Int(value.split(separator: " ").first ?? "") else { return -1 }
        return kilobytes * 1024
    }

    /// The value of field `name` in `/proc/<process>/status` (this process's by
    /// default), without its name and surrounding blanks; `nil` if the process or the
    /// field is not there.
    public static func status(_ name: String, of process: String = "self") -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(process)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return nil }
        return line.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces)
    }
}
