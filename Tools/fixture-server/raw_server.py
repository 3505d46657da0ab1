#!/usr/bin/env python3
"""A loopback HTTP/1.1 server written on raw sockets, for the transport conformance
suite: it can misbehave in ways a framework server will not (interim answers, lengths
that lie, connections closed between requests, silence).

Prints `PORT <n>` on the first line of stdout and exits when stdin closes.

Options:
  --ipv6                     listen on ::1 instead of 127.0.0.1
  --tls CERT KEY             speak HTTPS with this certificate and key
  --client-ca CA             with --tls: require a client certificate signed by CA

Routes (any method; the request body is read by Content-Length):
  /json                      200 {"name": "Ada", "id": 1}
  /echo                      200, JSON of method, path, headers and body
  /whoami                    200, the client certificate's subject (TLS), or "anonymous"
  /bytes?count=N             N bytes with a Content-Length
  /stream?count=N            N bytes, chunked, no Content-Length
  /chunked-and-length?count=N  chunked N bytes, also announcing a wrong Content-Length: 5
  /gzip?text=T&repeat=N      T*N gzip-compressed (Content-Encoding: gzip, Content-Length)
  /churn                     200; every third /churn answer closes its connection after it
  /idle-close?after=S        200; the connection is then closed once idle for S seconds
  /closed-idle               how many connections /idle-close closed so far
  /drip?count=N&interval=S   N bytes (Content-Length N), one every S seconds
  /headers-then-silence      headers announcing 100 bytes, then nothing
  /silence                   never answers
  /truncated                 announces 1000 bytes, sends 10, closes
  /reset                     closes the connection with a RST
  /redirect?status=S         status S with Location: /json and a small body
  /http10?count=N            an HTTP/1.0 answer without Content-Length, ended by closing
  /interim                   100 Continue, 103 Early Hints, then 200 "ok"
  /huge                      announces 2 GiB, sends 1 MiB, then nothing
  /close-next?after=headers|body|nothing
                             200; the connection is then closed the moment its next
                             request's headers (or its whole body, or its first byte,
                             unread) arrive, unanswered (an
                             idle timeout racing a request): the client must send that
                             request again, whole
  /body                      200, JSON of the body's declared and received length and its
                             bytes; a body shorter than its Content-Length is answered 400
                             after 0.5 s of silence
  /status?code=N&message=M&gzip=1
                             status N (401 by default) with a GraphQL error envelope
                             {"errors": [{"message": M}]}, gzip-compressed when asked
  /arm-close?after=headers|body|nothing
                             the next request to arrive on a connection that already
                             served one is dropped as /close-next drops it
  /closed-early              how many requests /close-next's connections dropped so far
  /cut-upload?after=N        reads the first N bytes of the body, then resets the connection
  /swallow?key=K&rst=1       reads the whole request, counts it under K, and closes the
                             connection unanswered (with a reset when rst=1)
  /swallowed?key=K           how many requests /swallow read under K
  /cacheable?key=K           200 {"name": "Ada", "id": N}, N counting the requests under K,
                             with Cache-Control: public, max-age=3600 and an ETag: a
                             client keeping its own cache would not ask again
"""
import gzip
import json
import os
import select
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time
from urllib.parse import parse_qs, urlsplit

CHURN = {"count": 0}
CLOSED_IDLE = {"count": 0}
CLOSED_EARLY = {"count": 0}
ARMED = {"after": None}
SWALLOWED = {}
LOCK = threading.Lock()


class Closed(Exception):
    pass


class Connection:
    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def read_until(self, marker):
        while marker not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise Closed()
            self.buffer += chunk
        head, _, self.buffer = self.buffer.partition(marker)
        return head

    def read_exactly(self, count):
        # Gathered in a bytearray: appending to bytes copies everything read so far.
        gathered = bytearray(self.buffer)
        try:
            while len(gathered) < count:
                chunk = self.sock.recv(max(65536, min(count - len(gathered), 1 << 20)))
                if not chunk:
                    raise Closed()
                gathered += chunk
        except BaseException:
            self.buffer = bytes(gathered)  # what came, for a caller that reports it
            raise
        data, self.buffer = bytes(gathered[:count]), bytes(gathered[count:])
        return data

    def send(self, data):
        self.sock.sendall(data)


def answer(status, body=b"", headers=(), reason="OK", version="HTTP/1.1", length=True):
    lines = ["%s %d %s" % (version, status, reason)]
    if length:
        lines.append("Content-Length: %d" % len(body))
    lines += ["%s: %s" % pair for pair in headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunked(body, piece=4096):
    parts = [b"%x\r\n%s\r\n" % (len(body[start:start + piece]), body[start:start + piece])
             for start in range(0, len(body), piece)]
    return b"".join(parts) + b"0\r\n\r\n"


def abort(sock, rst):
    if rst:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    sock.close()


def handle(conn, peer_subject):
    """Serves requests on one connection; returns when it should be closed."""
    idle_timeout = None
    close_next = False
    served = 0
    while True:
        conn.sock.settimeout(idle_timeout)
        if served and not close_next:
            with LOCK:
                close_next, ARMED["after"] = ARMED["after"], None
        if close_next == "nothing":
            # Closed as the request arrives, with its bytes unread: the peer gets a reset.
            select.select([conn.sock], [], [])
            with LOCK:
                CLOSED_EARLY["count"] += 1
            conn.sock.close()
            return
        try:
            head = conn.read_until(b"\r\n\r\n").decode("latin-1")
        except socket.timeout:
            with LOCK:
                CLOSED_IDLE["count"] += 1
            return
        conn.sock.settimeout(None)
        request_line, *header_lines = head.split("\r\n")
        method, target, _ = request_line.split(" ", 2)
        headers = {}
        for line in header_lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        served += 1
        if close_next:
            if close_next == "body":
                conn.read_exactly(int(headers.get("content-length", "0") or 0))
            with LOCK:
                CLOSED_EARLY["count"] += 1
            abort(conn.sock, rst=False)
            return
        url = urlsplit(target)
        declared = int(headers.get("content-length", "0") or 0)
        if url.path == "/body":
            # Read what comes within 0.5 s of silence, and say whether it was all.
            conn.sock.settimeout(0.5)
            try:
                body = conn.read_exactly(declared)
                conn.sock.settimeout(None)
            except (socket.timeout, Closed):
                received, conn.buffer = conn.buffer, b""
                payload = {"declared": declared, "received": len(received)}
                conn.sock.settimeout(None)
                conn.send(answer(400, json.dumps(payload).encode(), [("Content-Type", "application/json"), ("Connection", "close")]))
                abort(conn.sock, rst=False)
                return
            payload = {"declared": declared, "received": len(body), "body": body.decode("latin-1")}
            conn.send(answer(200, json.dumps(payload).encode(), [("Content-Type", "application/json")]))
            continue
        if url.path == "/cut-upload":
            # Reads the first `after` bytes of the body, then resets the connection.
            after = int({k: v[0] for k, v in parse_qs(url.query).items()}.get("after", "0"))
            conn.read_exactly(min(declared, after))
            abort(conn.sock, rst=True)
            return
        body = conn.read_exactly(declared)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        route = url.path.strip("/").split("/")[0]
        count = int(query.get("count", "0"))
        head_only = method == "HEAD"

        def send(data):
            if head_only:
                data = data.split(b"\r\n\r\n", 1)[0] + b"\r\n\r\n"
            conn.send(data)

        if route == "json":
            send(answer(200, b'{"name": "Ada", "id": 1}', [("Content-Type", "application/json")]))
        elif route == "echo":
            payload = {"method": method, "path": url.path, "headers": headers, "body": body.decode("utf-8", "replace")}
            send(answer(200, json.dumps(payload).encode(), [("Content-Type", "application/json")]))
        elif route == "whoami":
            send(answer(200, (peer_subject or "anonymous").encode(), [("Content-Type", "text/plain")]))
        elif route == "bytes":
            send(answer(200, b"x" * count))
        elif route == "pattern":
            # Bytes that tell answers apart: byte i is (i * 31 + seed) % 251.
            seed = int(query.get("seed", "0"))
            data = bytes((i * 31 + seed) % 251 for i in range(count))
            if query.get("chunked") == "1":
                send(answer(200, length=False, headers=[("Transfer-Encoding", "chunked")]) + chunked(data))
            else:
                send(answer(200, data))
        elif route == "stream":
            send(answer(200, length=False, headers=[("Transfer-Encoding", "chunked")]) + chunked(b"y" * count))
        elif route == "chunked-and-length":
            send(answer(200, length=False, headers=[("Transfer-Encoding", "chunked"), ("Content-Length", "5")])
                 + chunked(b"z" * count))
        elif route == "gzip":
            text = (query.get("text", "x") * int(query.get("repeat", "1"))).encode()
            send(answer(200, gzip.compress(text), [("Content-Encoding", "gzip"), ("Content-Type", "text/plain")]))
        elif route == "churn":
            with LOCK:
                CHURN["count"] += 1
                close = CHURN["count"] % 3 == 0
            send(answer(200, b"churn"))
            if close:
                abort(conn.sock, rst=False)
                return
        elif route == "idle-close":
            idle_timeout = float(query.get("after", "0.05"))
            send(answer(200, b"idle"))
        elif route == "status":
            code = int(query.get("code", "401"))
            text = json.dumps({"errors": [{"message": query.get("message", "Unauthorized")}]}).encode()
            fields = [("Content-Type", "application/json")]
            if query.get("gzip") == "1":
                text = gzip.compress(text)
                fields.append(("Content-Encoding", "gzip"))
            send(answer(code, text, fields, reason="Status"))
        elif route == "close-next":
            close_next = query.get("after", "headers")
            send(answer(200, b"armed"))
        elif route == "arm-close":
            with LOCK:
                ARMED["after"] = query.get("after", "headers")
            send(answer(200, b"armed"))
        elif route == "swallow":
            # Reads the whole request, counts it, then closes unanswered (?rst=1: with a
            # reset): a server that acted on a request and died before answering.
            with LOCK:
                SWALLOWED[url.path + "?" + query.get("key", "")] = SWALLOWED.get(url.path + "?" + query.get("key", ""), 0) + 1
            abort(conn.sock, rst=query.get("rst") == "1")
            return
        elif route == "cacheable":
            with LOCK:
                key = "/cacheable?" + query.get("key", "")
                SWALLOWED[key] = SWALLOWED.get(key, 0) + 1
                served = SWALLOWED[key]
            send(answer(200, b'{"name": "Ada", "id": %d}' % served,
                        [("Content-Type", "application/json"), ("Cache-Control", "public, max-age=3600"), ("ETag", '"v1"')]))
        elif route == "swallowed":
            with LOCK:
                seen = SWALLOWED.get("/swallow?" + query.get("key", ""), 0)
            send(answer(200, str(seen).encode()))
        elif route == "closed-early":
            with LOCK:
                closed = CLOSED_EARLY["count"]
            send(answer(200, str(closed).encode()))
        elif route == "closed-idle":
            with LOCK:
                closed = CLOSED_IDLE["count"]
            send(answer(200, str(closed).encode()))
        elif route == "drip":
            conn.send(answer(200, length=False, headers=[("Content-Length", str(count))]))
            for _ in range(count):
                time.sleep(float(query.get("interval", "0.2")))
                conn.send(b"d")
        elif route == "headers-then-silence":
            conn.send(answer(200, length=False, headers=[("Content-Length", "100")]))
            wait_for_close(conn.sock)
            return
        elif route == "silence":
            wait_for_close(conn.sock)
            return
        elif route == "truncated":
            conn.send(answer(200, length=False, headers=[("Content-Length", "1000")]) + b'{"partial"')
            abort(conn.sock, rst=False)
            return
        elif route == "reset":
            abort(conn.sock, rst=True)
            return
        elif route == "redirect":
            status = int(query.get("status", "302"))
            send(answer(status, b'{"redirect": true}', [("Location", "/json")], reason="Redirect"))
        elif route == "http10":
            conn.send(answer(200, b"h" * count, version="HTTP/1.0", length=False))
            abort(conn.sock, rst=False)
            return
        elif route == "interim":
            conn.send(b"HTTP/1.1 100 Continue\r\n\r\n")
            conn.send(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n")
            send(answer(200, b"ok", [("Content-Type", "text/plain")]))
        elif route == "huge":
            conn.send(answer(200, length=False, headers=[("Content-Length", str(2 << 30))]))
            try:
                conn.send(b"h" * (1 << 20))
            except OSError:
                return
            wait_for_close(conn.sock)
            return
        else:
            send(answer(404, b'{"error": "no route"}'))


def wait_for_close(sock):
    try:
        while sock.recv(65536):
            pass
    except OSError:
        pass


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        subject = None
        context = self.server.tls_context
        try:
            if context is not None:
                sock = context.wrap_socket(sock, server_side=True)
                certificate = sock.getpeercert()
                if certificate:
                    subject = ",".join("%s=%s" % pair[0] for pair in certificate.get("subject", ()))
            handle(Connection(sock), subject)
        except (Closed, OSError, ssl.SSLError, ValueError):
            pass
        finally:
            try:
                sock.close()
            except OSError:
                pass


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    tls_context = None


class Server6(Server):
    address_family = socket.AF_INET6


def option(name, count=1):
    if name not in sys.argv:
        return None
    index = sys.argv.index(name)
    values = sys.argv[index + 1:index + 1 + count]
    return values if count > 1 else values[0]


def main():
    ipv6 = "--ipv6" in sys.argv
    server = (Server6 if ipv6 else Server)(("::1" if ipv6 else "127.0.0.1", 0), Handler)
    tls = option("--tls", 2)
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(tls[0], tls[1])
        client_ca = option("--client-ca")
        if client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(client_ca)
        server.tls_context = context
    print("PORT %d" % server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
