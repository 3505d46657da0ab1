// MomentsTransferProbe TRANSPORT MODE BASE_URL ARGUMENT
//
// Sends one large transfer through one transport, in a process of its own so that its
// memory is its own, and prints one JSON object: the server's answer and the process's
// resident memory before the transfer and at its peak.
//   TRANSPORT: urlsession | curl
//   MODE: file PATH | multipart PATH (the file as a form's part, beside a text field)
//         | download PATH (200 MiB from /download, written to PATH)
import Foundation
import MomentsCurl
import MomentsNetworking
import MomentsHTTP

struct Upload: Request {
    typealias Response = Data
    let body: RequestBody?
    var method: HTTPMethod { .post }
    var path: String { "/upload" }
}

func kilobytes(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix(field + ":") } ?? ""
    return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let baseURL = URL(string: arguments[3]) else {
    FileHandle.standardError.write(Data("usage: MomentsTransferProbe urlsession|curl file|multipart BASE_URL PATH\n".utf8))
    exit(2)
}
let transport: any HTTPTransport = arguments[1] == "curl" ? try CurlTransport() : URLSessionTransport()
let client = HTTPClient(baseURL: baseURL, transport: transport) {
    $0.timeout = .seconds(300)
    $0.maximumResponseSize = 1 << 30
}
let file = URL(fileURLWithPath: arguments[4])
// A small request first, so the transport's own machinery is in place before measuring.
_ = try await client.send(Upload(body: .data(Data("warm".utf8))))
let before = kilobytes("VmRSS")
var server: Any = [:]
switch arguments[2] {
case "download":
    let size = 200 << 20
    let download = try await client.response(for: FileDownload(path: "/download", to: file, query: [URLQueryItem(name: "size", value: "\(size)")]))
    server = ["length": size, "sha256": download.headers["X-Content-SHA256"] ?? ""]
case "multipart":
    var form = MultipartForm()
    form.addField("note", "a large file")
    form.addFile("file", at: file)
    server = await answer(to: Upload(body: .multipart(form)))
default:
    server = await answer(to: Upload(body: .file(file)))
}

/// The server's JSON answer to `upload`, or `{"refused": why}` when the client refused it.
func answer(to upload: Upload) async -> Any {
    do {
        let body = try await client.send(upload)
        return (try? JSONSerialization.jsonObject(with: body)) ?? [:]
    } catch {
        return ["refused": String(describing: error)]
    }
}
let peak = kilobytes("VmHWM")
let report: [String: Any] = ["server": server, "rssBeforeKiB": before, "peakKiB": peak]
print(String(decoding: try JSONSerialization.data(withJSONObject: report), as: UTF8.self))
