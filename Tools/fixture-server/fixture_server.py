#!/usr/bin/env python3
"""A loopback HTTP server with misbehaving routes, for the transport tests.

Binds 127.0.0.1 on the given port (0: a free one), prints `PORT <n>` on the first line
of stdout, and exits when stdin closes, so it never outlives the test that started it.
With `--tls` it speaks HTTPS with the self-signed certificate in tls/ (a test key,
trusted by nothing), for the certificate-failure tests.

Routes (any method):
  /echo               200, JSON of method, path, query, headers and body
  /status/<code>      that status, body {"error": "status <code>"}
  /slow?seconds=S     waits S seconds, then 200 {"slow": true}
  /slow-started?atLeast=N     answers, once N /slow requests have arrived (up to 60 s),
                      200 with how many have (as text)
  /bytes?count=N      200 with N bytes and a Content-Length
  /stream?count=N     200 with N bytes, chunked, no Content-Length
  /truncated          announces 1000 bytes, sends 10, closes
  /reset              closes the connection without answering (RST)
  /json               200 {"name": "Ada", "id": 1}
  /redirect?status=S&to=URL   status S (default 302) with Location: URL
  /loop               307 with Location: /loop
  /gzip?text=T&repeat=N       200, T repeated N times, gzip-compressed (Content-Encoding)
"""
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

# How many /slow requests have arrived: tests wait for a slow request to be at the server.
SLOW_STARTED = [0]
SLOW_ARRIVED = threading.Condition()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers go out in small writes; with Nagle's algorithm each answer on a kept-alive
    # connection would wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def _body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, body, content_type="application/json", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _route(self):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        body = self._body()
        parts = url.path.strip("/").split("/")
        if parts[0] == "echo":
            payload = {
                "method": self.command,
                "path": url.path,
                "rawPath": self.path.split("?")[0],
                "query": {k: v[0] for k, v in query.items()},
                "rawQuery": url.query,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
            }
            self._send(200, json.dumps(payload).encode())
        elif parts[0] == "status" and len(parts) > 1:
            code = int(parts[1])
            extra = [("Retry-After", query["retryAfter"][0])] if "retryAfter" in query else []
            self._send(code, json.dumps({"error": "status %d" % code}).encode(), headers=extra)
        elif parts[0] == "slow-started":
            wanted = int(query.get("atLeast", ["0"])[0])
            with SLOW_ARRIVED:
                SLOW_ARRIVED.wait_for(lambda: SLOW_STARTED[0] >= wanted, timeout=60)
                count = SLOW_STARTED[0]
            self._send(200, str(count).encode(), "text/plain")
        elif parts[0] == "slow":
            with SLOW_ARRIVED:
                SLOW_STARTED[0] += 1
                SLOW_ARRIVED.notify_all()
            time.sleep(float(query.get("seconds", ["1"])[0]))
            self._send(200, b'{"slow": true}')
        elif parts[0] == "bytes":
            self._send(200, b"x" * int(query.get("count", ["0"])[0]), "application/octet-stream")
        elif parts[0] == "stream":
            count = int(query.get("count", ["0"])[0])
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"y" * 4096
            sent = 0
            try:
                while sent < count:
                    piece = chunk[: min(4096, count - sent)]
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                    sent += len(piece)
                self.wfile.write(b"0\r\n\r\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
        elif parts[0] == "truncated":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"partial"')
            self.wfile.flush()
            self._abort(linger=False)
        elif parts[0] == "reset":
            self._abort(linger=True)
        elif parts[0] == "json":
            self._send(200, b'{"name": "Ada", "id": 1}')
        elif parts[0] == "gzip":
            import gzip
            text = query.get("text", ["x"])[0] * int(query.get("repeat", ["1"])[0])
            self._send(200, gzip.compress(text.encode()), "text/plain", headers=[("Content-Encoding", "gzip")])
        elif parts[0] == "loop":
            self._send(307, b'{"redirect": true}', headers=[("Location", "/loop")])
        elif parts[0] == "redirect":
            status = int(query.get("status", ["302"])[0])
            self._send(status, b'{"redirect": true}', headers=[("Location", query.get("to", ["/echo"])[0])])
        else:
            self._send(404, b'{"error": "no route"}')

    def _abort(self, linger):
        if linger:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.connection.close()

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _route


class QuietServer(ThreadingHTTPServer):
    """Expected disconnects (clients that time out or cancel) print no traceback."""

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def main():
    arguments = [a for a in sys.argv[1:] if not a.startswith("--")]
    port = int(arguments[0]) if arguments else 0
    server = QuietServer(("127.0.0.1", port), Handler)
    if "--tls" in sys.argv:
        import ssl
        here = os.path.dirname(os.path.abspath(__file__))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(here, "tls", "cert.pem"), os.path.join(here, "tls", "key.pem"))
        server.socket = context.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()  # returns when the parent closes stdin or dies
    os._exit(0)


if __name__ == "__main__":
    main()
