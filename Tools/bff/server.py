#!/usr/bin/env python3
"""The reference Moments BFF: the schema in schema.graphql, served at POST /graphql.

  python3 Tools/bff/server.py [--port 0] [--users N] [--moments-per-user M]
                              [--token TOKEN] [--is-liked per-viewer|global] [--exit-with-stdin]

Binds 127.0.0.1 (port 0: a free one) and prints `PORT <n>` as its first line.
--users adds generated users `user-1`…`user-N` to the four sample moments of user "0".
--token makes every /graphql request need `Authorization: Bearer TOKEN` (else 401).
--is-liked global keeps one isLiked per moment, whoever asks, as the public Moments BFF
does (see data.py); per-viewer (the default) says whether the asking user likes it.
--exit-with-stdin stops the server when its stdin closes (for parents that spawn it).

Control routes: GET /__health, POST /__reset (back to the initial data),
POST and DELETE /__faults (see faults.py), GET /__stats (requests served, mutations among them, faults
injected, and the last /graphql request's `traceparent`).
"""
import argparse
import json
import os
import socket
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

try:
    from graphql import build_schema, execute, parse, validate, GraphQLError
except ImportError as error:  # said on the first line, where parents look for the port
    print("ERROR the reference BFF needs the Python package graphql-core (%s): run "
          "'bash .ci/run', or 'python3 -m pip install \"graphql-core>=3.2,<3.3\"'" % error, flush=True)
    sys.exit(3)

from data import Store
from faults import Faults

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA = build_schema(open(os.path.join(HERE, "schema.graphql"), encoding="utf-8").read())


class Documents:
    """Parsed and validated documents, by their text: clients send the same few queries
    over and over, and parsing and validating dominate the cost of a small query."""

    def __init__(self, limit=256):
        self.limit = limit
        self.cache = {}
        self.lock = threading.Lock()

    def get(self, source):
        with self.lock:
            hit = self.cache.get(source)
        if hit is not None:
            return hit
        try:
            document = parse(source)
        except GraphQLError as error:
            return None, [error]
        errors = validate(SCHEMA, document)
        entry = (document, errors) if errors else (document, None)
        with self.lock:
            if len(self.cache) >= self.limit:
                self.cache.pop(next(iter(self.cache)))
            self.cache[source] = entry
        return entry


DOCUMENTS = Documents()


class Root:
    """Resolvers of the root fields; graphql-core calls them with (info, **arguments)."""

    def __init__(self, store):
        self.store = store

    def getMomentsDetailsByUserID(self, info, userID):
        return self.store.details(userID)

    def updateMomentLike(self, info, momentID, userID, isLiked):
        return self.store.update_like(momentID, userID, isLiked)


# A client that goes away mid-answer (a cancelled request, a timeout, a fault test) is
# expected; only other errors are worth a traceback.
DISCONNECTS = (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, TimeoutError)


def _is_mutation(body):
    """Whether a /graphql body's document is a mutation."""
    try:
        query = json.loads(body).get("query")
    except (ValueError, AttributeError):
        return False
    return isinstance(query, str) and query.lstrip().startswith("mutation")


class BFF(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], DISCONNECTS):
            return
        super().handle_error(request, client_address)

    def __init__(self, address, users, per_user, token, is_liked="per-viewer"):
        super().__init__(address, Handler)
        self.users, self.per_user, self.token, self.is_liked = users, per_user, token, is_liked
        self.faults = Faults()
        self.requests = 0
        self.mutations = 0
        self.counter_lock = threading.Lock()
        self.hanging = []
        self.last_traceparent = None
        self.reset_data()

    def reset_data(self):
        self.store = Store(self.users, self.per_user, self.is_liked)
        self.root = Root(self.store)
        self.answers = {}  # (data version, query, operation, variables) -> (status, bytes)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers go out in small writes; with Nagle's algorithm each answer on a kept-alive
    # connection would wait ~40 ms for a delayed ACK.
    disable_nagle_algorithm = True
    server: BFF

    def log_message(self, *args):
        pass

    def _read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status, body, content_type="application/json", extra=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status, value, extra=()):
        self._send(status, json.dumps(value, ensure_ascii=False).encode("utf-8"), extra=extra)

    def _abort(self):
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    # Routes

    def do_GET(self):
        if self.path == "/__health":
            self._json(200, {"ok": True})
        elif self.path == "/__stats":
            self._json(200, {"requests": self.server.requests, "mutations": self.server.mutations, "faultsInjected": self.server.faults.injected,
                             "lastTraceparent": self.server.last_traceparent})
        else:
            self._json(404, {"error": "no route %s" % self.path})

    def do_DELETE(self):
        self._read_body()
        if self.path == "/__faults":
            self.server.faults.clear()
            self._json(200, {"ok": True})
        else:
            self._json(404, {"error": "no route %s" % self.path})

    def do_POST(self):
        body = self._read_body()
        if self.path == "/__faults":
            try:
                self.server.faults.set(json.loads(body or b"{}"))
            except (ValueError, TypeError) as error:
                return self._json(400, {"error": str(error)})
            return self._json(200, {"ok": True})
        if self.path == "/__reset":
            self.server.faults.clear()
            self.server.reset_data()
            return self._json(200, {"ok": True})
        if self.path != "/graphql":
            return self._json(404, {"error": "no route %s" % self.path})
        with self.server.counter_lock:
            self.server.requests += 1
            if _is_mutation(body):
                self.server.mutations += 1
            self.server.last_traceparent = self.headers.get("traceparent")
        if self.server.token is not None:
            if self.headers.get("Authorization") != "Bearer %s" % self.server.token:
                return self._json(401, {"error": "missing or invalid token"})
        fault = self.server.faults.next()
        if fault is not None and self._inject(fault, body):
            return
        status, payload = self._answer(body)
        self._send(status, payload)

    def _answer(self, body):
        """The serialized answer, from the cache when the same query ran on the same data.
        Executing a query in graphql-core costs milliseconds; load tests repeat queries."""
        key = None
        try:
            request = json.loads(body)
            if isinstance(request, dict) and isinstance(request.get("query"), str) \
                    and not request["query"].lstrip().startswith("mutation"):
                key = (self.server.store.version, request["query"], request.get("operationName"),
                       json.dumps(request.get("variables"), sort_keys=True))
        except ValueError:
            pass
        if key is not None:
            hit = self.server.answers.get(key)
            if hit is not None:
                return hit
        status, answer = self._execute(body)
        payload = (status, json.dumps(answer, ensure_ascii=False).encode("utf-8"))
        if key is not None and status == 200 and "errors" not in answer:
            if len(self.server.answers) > 4096:
                self.server.answers.clear()
            self.server.answers[key] = payload
        return payload

    def _execute(self, body):
        try:
            request = json.loads(body)
            query = request["query"]
        except (ValueError, KeyError, TypeError):
            return 400, {"errors": [{"message": "the body must be JSON with a 'query' string"}]}
        if not isinstance(query, str):
            return 400, {"errors": [{"message": "'query' must be a string"}]}
        document, errors = DOCUMENTS.get(query)
        if errors:
            # A document that cannot run at all is a client error.
            return 400, {"data": None, "errors": [error.formatted for error in errors]}
        result = execute(
            SCHEMA, document, root_value=self.server.root,
            variable_values=request.get("variables"), operation_name=request.get("operationName"),
        )
        answer = {"data": result.data}
        if result.errors:
            answer["errors"] = [error.formatted for error in result.errors]
        return (400 if result.errors and result.data is None and not any(
            e.path for e in result.errors) else 200), answer

    def _inject(self, fault, body):
        """Answers with `fault`; returns False if the request should then be served."""
        kind = fault["kind"]
        if kind == "status":
            status = int(fault.get("status", 500))
            extra = [("Retry-After", str(fault["retryAfter"]))] if "retryAfter" in fault else []
            payload = fault.get("body", json.dumps({"error": "injected status %d" % status}))
            self._send(status, payload.encode("utf-8"), extra=extra)
        elif kind == "reset":
            self._abort()
        elif kind == "slow":
            time.sleep(float(fault.get("seconds", 2)))
            return False
        elif kind == "malformed":
            self._send(200, b'{"data": {"getMomentsDetailsByUserID": {"userDetails": nul')
        elif kind == "truncated":
            status, answer = self._execute(body)
            whole = json.dumps(answer).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(whole)))
            self.end_headers()
            self.wfile.write(whole[: len(whole) // 2])
            self.wfile.flush()
            self._abort()
        elif kind == "html":
            page = b"<!DOCTYPE html><html><body><h1>502 Bad Gateway</h1></body></html>"
            self._send(int(fault.get("status", 200)), page, content_type="text/html")
        elif kind == "empty":
            self._send(200, b"")
        elif kind == "graphqlError":
            errors = [{"message": fault.get("message", "injected failure"),
                       "locations": [{"line": 2, "column": 3}],
                       "path": ["getMomentsDetailsByUserID", "moments", 0, "title"]}]
            data = self._execute(body)[1].get("data") if fault.get("partial") else None
            self._json(int(fault.get("status", 200)), {"errors": errors, "data": data})
        elif kind == "large":
            size = int(fault.get("bytes", 1 << 20))
            filler = "x" * max(0, size - 40)
            self._send(200, json.dumps({"data": None, "filler": filler}).encode("utf-8"))
        elif kind == "hang":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b'{"data": ')
            self.wfile.flush()
            self.server.hanging.append(self.connection)
            while True:
                time.sleep(3600)
        return True


def main():
    parser = argparse.ArgumentParser(description="The reference Moments BFF.")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--users", type=int, default=0)
    parser.add_argument("--moments-per-user", type=int, default=10)
    parser.add_argument("--token")
    parser.add_argument("--is-liked", choices=["per-viewer", "global"], default="per-viewer")
    parser.add_argument("--exit-with-stdin", action="store_true")
    args = parser.parse_args()

    server = BFF(("127.0.0.1", args.port), args.users, args.moments_per_user, args.token, args.is_liked)
    print("PORT %d" % server.server_address[1], flush=True)
    print("Moments BFF on http://127.0.0.1:%d/graphql" % server.server_address[1], file=sys.stderr, flush=True)
    if args.exit_with_stdin:
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.read()
        os._exit(0)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
