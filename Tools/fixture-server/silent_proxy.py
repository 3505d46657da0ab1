#!/usr/bin/env python3
"""A TCP proxy that can go silent, for tests of connections whose peer vanishes
without a word (a NAT or load balancer that forgot them, a failover).

  python3 Tools/fixture-server/silent_proxy.py TARGET_HOST TARGET_PORT CONTROL_FILE

Listens on 127.0.0.1 (a free port, printed as `PORT <n>` on the first line) and
forwards each connection to TARGET. When CONTROL_FILE holds `silent`, every connection
open at that moment stops forwarding in both directions and is never closed (its
bytes are neither read nor answered); connections made later are forwarded again.
Exits when stdin closes.
"""
import os
import select
import socket
import sys
import threading
import time

LOCK = threading.Lock()
OPEN = set()  # connections still forwarded (ids)
SILENCED = set()
COUNTER = [0]


def forward(ident, client, upstream):
    pair = {client: upstream, upstream: client}
    try:
        while True:
            with LOCK:
                if ident in SILENCED:
                    break
            readable, _, _ = select.select(list(pair), [], [], 0.05)
            with LOCK:
                if ident in SILENCED:
                    break  # bytes that arrived as it went silent are not forwarded
            for sock in readable:
                data = sock.recv(65536)
                if not data:
                    raise EOFError
                pair[sock].sendall(data)
    except (OSError, EOFError):
        client.close()
        upstream.close()
        return
    # Silent: hold both sockets open, forever, reading nothing.
    while True:
        time.sleep(3600)


def watch(control):
    while True:
        try:
            with open(control) as handle:
                text = handle.read().strip()
        except OSError:
            text = ""
        if text == "silent":
            with LOCK:
                SILENCED.update(OPEN)
                OPEN.clear()
            try:
                os.remove(control)
            except OSError:
                pass
        time.sleep(0.02)


def main():
    host, port, control = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print("PORT %d" % server.getsockname()[1], flush=True)
    threading.Thread(target=watch, args=(control,), daemon=True).start()

    def accept():
        while True:
            client, _ = server.accept()
            try:
                upstream = socket.create_connection((host, port))
            except OSError:
                client.close()
                continue
            with LOCK:
                COUNTER[0] += 1
                ident = COUNTER[0]
                OPEN.add(ident)
            threading.Thread(target=forward, args=(ident, client, upstream), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    os._exit(0)


if __name__ == "__main__":
    main()
