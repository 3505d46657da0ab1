#!/usr/bin/env bash
# The store's ordering rule against many seeded schedules, with the SDK built for
# release: one store (StoreSimulationTests) and several instances sharing storage
# (SharedStoreSimulationTests). Prints each count, its failures and time.
#   bash Scripts/simulate.sh [SCHEDULES] [SHARED_SCHEDULES]     (100,000 and 20,000 by default)
# Replay one schedule: MOMENTS_SIMULATION_SEED=S swift test --filter StoreSimulationTests
#                  or: MOMENTS_SHARED_SIMULATION_SEED=S swift test --filter SharedStoreSimulationTests
set -euo pipefail
cd "$(dirname "$0")/.."
MOMENTS_SIMULATION_SCHEDULES="${1:-100000}" MOMENTS_SHARED_SIMULATION_SCHEDULES="${2:-20000}" \
    swift test -c release -Xswiftc -enable-testing --scratch-path .build-release-tests \
    --filter 'StoreSimulationTests|SharedStoreSimulationTests'
