#!/usr/bin/env python3
"""A loopback HTTP server for uploads and downloads of any size, holding none whole.

Binds 127.0.0.1 on a free port, prints `PORT <n>` on the first line of stdout, and
exits when stdin closes, so it never outlives the test that started it.

Routes:
  POST /upload     reads the body as it arrives (Content-Length, or chunked) and answers
                   200 with JSON: {"length", "sha256", "contentType", "parts"}; for a
                   multipart/form-data body, "parts" lists each part's name, filename,
                   content type, length and sha256, parsed as the bytes stream in.
  GET /download?size=N[&chunked=1]
                   N bytes of a fixed pattern (Content-Length, or chunked), with the
                   pattern's sha256 in the X-Content-SHA256 header.
"""
import hashlib
import json
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

CHUNK = 256 << 10
PATTERN = bytes((i * 131 + (i >> 8) * 7) & 0xFF for i in range(CHUNK))


def read_exactly(handler, count):
    """`count` bytes of the request, chunk by chunk."""
    while count:
        data = handler.rfile.read(min(CHUNK, count))
        if not data:
            raise EOFError("the body ended early")
        count -= len(data)
        yield data


def body_chunks(handler):
    """The request body, chunk by chunk, whether it has a length or is chunked."""
    if handler.headers.get("Transfer-Encoding", "").lower() != "chunked":
        yield from read_exactly(handler, int(handler.headers.get("Content-Length") or 0))
        return
    while True:
        size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
        if size == 0:
            while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                pass
            return
        yield from read_exactly(handler, size)
        handler.rfile.readline()


class MultipartParser:
    """Parses multipart/form-data as bytes arrive, keeping only a boundary's worth."""

    def __init__(self, boundary):
        self.delimiter = b"\r\n--" + boundary
        self.buffer = b"\r\n"  # the first boundary is not preceded by a line break
        self.state = "preamble"
        self.parts = []
        self.part = None

    def feed(self, data):
        self.buffer += data
        while True:
            if self.state == "preamble" or self.state == "boundary":
                index = self.buffer.find(self.delimiter)
                if index < 0 or len(self.buffer) < index + len(self.delimiter) + 2:
                    return
                if self.state == "boundary" and index != 0:
                    raise ValueError("bytes between a part and its boundary")
                after = self.buffer[index + len(self.delimiter):index + len(self.delimiter) + 2]
                self.buffer = self.buffer[index + len(self.delimiter) + 2:]
                if after == b"--":
                    self.state = "end"
                    return
                if after != b"\r\n":
                    raise ValueError("a boundary not followed by a line break")
                self.state = "headers"
            elif self.state == "headers":
                index = self.buffer.find(b"\r\n\r\n")
                if index < 0:
                    return
                lines = self.buffer[:index].decode("utf-8").split("\r\n")
                self.buffer = self.buffer[index + 4:]
                headers = {}
                for line in lines:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                disposition = headers.get("content-disposition", "")
                name = re.search(r'\bname="([^"]*)"', disposition)
                filename = re.search(r'\bfilename="([^"]*)"', disposition)
                self.part = {
                    "name": name.group(1) if name else None,
                    "filename": filename.group(1) if filename else None,
                    "contentType": headers.get("content-type"),
                    "length": 0,
                    "hash": hashlib.sha256(),
                }
                self.state = "body"
            elif self.state == "body":
                index = self.buffer.find(self.delimiter)
                if index < 0:
                    keep = len(self.delimiter)
                    if len(self.buffer) > keep:
                        self._take(self.buffer[:-keep])
                        self.buffer = self.buffer[-keep:]
                    return
                self._take(self.buffer[:index])
                self.buffer = self.buffer[index:]
                digest = self.part.pop("hash").hexdigest()
                self.part["sha256"] = digest
                self.parts.append(self.part)
                self.part = None
                self.state = "boundary"
            else:
                return

    def _take(self, data):
        self.part["length"] += len(data)
        self.part["hash"].update(data)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _send_json(self, status, payload):
        body = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self):
        if urlsplit(self.path).path != "/upload":
            return self._send_json(404, {"error": "no such route"})
        content_type = self.headers.get("Content-Type", "")
        match = re.search(r'boundary="?([^";]+)"?', content_type)
        parser = MultipartParser(match.group(1).encode()) if content_type.startswith("multipart/form-data") and match else None
        whole = hashlib.sha256()
        length = 0
        try:
            for data in body_chunks(self):
                whole.update(data)
                length += len(data)
                if parser:
                    parser.feed(data)
        except (EOFError, ValueError) as error:
            return self._send_json(400, {"error": str(error)})
        payload = {"length": length, "sha256": whole.hexdigest(), "contentType": content_type}
        if parser:
            if parser.state != "end":
                return self._send_json(400, {"error": "the form did not end with its closing boundary", "state": parser.state})
            payload["parts"] = parser.parts
        self._send_json(200, payload)

    do_PUT = do_POST

    def do_GET(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path != "/download":
            return self._send_json(404, {"error": "no such route"})
        size = int(query.get("size", ["0"])[0])
        chunked = query.get("chunked", ["0"])[0] == "1"
        digest = hashlib.sha256()
        remaining = size
        while remaining:
            piece = PATTERN[:min(CHUNK, remaining)]
            digest.update(piece)
            remaining -= len(piece)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("X-Content-SHA256", digest.hexdigest())
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(size))
        self.end_headers()
        remaining = size
        try:
            while remaining:
                piece = PATTERN[:min(CHUNK, remaining)]
                if chunked:
                    self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                else:
                    self.wfile.write(piece)
                remaining -= len(piece)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()


if __name__ == "__main__":
    main()
