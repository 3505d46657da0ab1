#!/usr/bin/env bash
# The store's ordering rule against many seeded schedules, with the SDK built for
# release: one store (StoreSimulationTests) and several instances sharing storage
# (SharedStoreSimulationTests), each schedule against both models of the server's
# `isLiked` (per viewer, and one global value per moment as the public BFF keeps).
# Prints each count, its failures and time.
#   bash Scripts/simulate.sh [SCHEDULES] [SHARED_SCHEDULES]     (per model; 100,000 and 20,000 by default)
# Replay one schedule: MOMENTS_SIMULATION_SEED=S swift test --filter StoreSimulationTests
#                  or: MOMENTS_SHARED_SIMULATION_SEED=S swift test --filter SharedStoreSimulationTests
# The shared simulation's stores run on real threads, so one of its failures may depend
# on how their work interleaved and not come back when replayed: with
# MOMENTS_SIMULATION_TRACE=failures, each failing schedule prints its steps and the whole
# history of its calls and of the shared storage.
set -euo pipefail
cd "$(dirname "$0")/.."
MOMENTS_SIMULATION_SCHEDULES="${1:-100000}" MOMENTS_SHARED_SIMULATION_SCHEDULES="${2:-20000}" \
    swift test -c release -Xswiftc -enable-testing --scratch-path .build-release-tests \
    --filter 'StoreSimulationTests|SharedStoreSimulationTests'
