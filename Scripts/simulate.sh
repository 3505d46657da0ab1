#!/usr/bin/env bash
# The store's ordering rule against many seeded schedules (see StoreSimulationTests),
# with the SDK built for release. Prints the count, failures and time.
#   bash Scripts/simulate.sh [SCHEDULES]        (100,000 by default)
# Replay one schedule: MOMENTS_SIMULATION_SEED=S swift test --filter StoreSimulationTests
set -euo pipefail
cd "$(dirname "$0")/.."
MOMENTS_SIMULATION_SCHEDULES="${1:-100000}" swift test -c release -Xswiftc -enable-testing \
    --scratch-path .build-release-tests --filter StoreSimulationTests
