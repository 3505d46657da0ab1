#!/usr/bin/env bash
# The full load-and-soak run: 20,000 requests, 64 at a time, 5% faults, against the
# reference BFF, with the SDK built for release (a debug build spends most of its time
# in unoptimized decoding). Prints the measured figures.
# Then file uploads cancelled, timed out and reset mid-body, UPLOADS per transport
# (every call must end with a value or a typed error, and the process must live).
#   bash Scripts/soak.sh [REQUESTS] [UPLOADS]
set -euo pipefail
cd "$(dirname "$0")/.."
MOMENTS_SOAK_REQUESTS="${1:-20000}" swift test -c release -Xswiftc -enable-testing \
    --scratch-path .build-release-tests --filter LoadSoakTests
MOMENTS_UPLOAD_SOAK="${2:-3000}" swift test -c release -Xswiftc -enable-testing \
    --scratch-path .build-release-tests --filter UploadFaultSoakTests
