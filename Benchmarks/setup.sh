#!/usr/bin/env bash
# Installs what the HTTP benchmarks need: nginx (the fast local server) and wrk (the
# load generator that measures that server's own ceiling).
set -euo pipefail
missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v wrk >/dev/null || missing+=(wrk)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
# The package starts a system nginx on port 80; the benchmarks run their own.
service nginx stop >/dev/null 2>&1 || true
echo "nginx: $(/usr/sbin/nginx -v 2>&1)"
echo "wrk: $(wrk --version 2>&1 | head -1)"
