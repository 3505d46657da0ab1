#!/usr/bin/env bash
# The store's rules against many seeded schedules, with the SDK built for release.
#
# First the deterministic simulation of the store's core (CoreSimulationTests): one
# store, and two or three sharing storage and a change bus, each schedule against both
# models of the server's `isLiked` (per viewer, and one value per moment as the public
# BFF keeps). Single-threaded: a failing seed replays exactly, with its trace:
#   MOMENTS_CORE_SIMULATION_SEED=S swift test --filter CoreSimulationTests           (one store)
#   MOMENTS_CORE_SHARED_SIMULATION_SEED=S swift test --filter CoreSimulationTests    (shared)
# Then, smaller, the simulations of the whole actor on real threads (StoreSimulationTests,
# SharedStoreSimulationTests), whose failures may depend on how threads interleaved.
#
#   bash Scripts/simulate.sh [CORE_SCHEDULES] [CORE_SHARED_SCHEDULES] [ACTOR_SCHEDULES] [ACTOR_SHARED_SCHEDULES]
# (per model; 400,000, 100,000, 2,000 and 500 by default: 1,000,000 core schedules in all)
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
# Built once, then run without building: each `swift test` that builds checks the build
# again, and after a test run that check rebuilt every module. Only the test bundle is
# built (and what it needs), not the benchmarks or the command-line tool.
build=(-c release -Xswiftc -enable-testing --scratch-path .build-release-tests)
swift build "${build[@]}" --product MomentsPackageTests
echo "build: $(( $(date +%s) - start )) s"
# The simulations alone: both cores run them (the suite runs one at a time).
export MOMENTS_HEAVY_TESTS_AT_ONCE=2
MOMENTS_CORE_SIMULATION_SCHEDULES="${1:-400000}" MOMENTS_CORE_SHARED_SIMULATION_SCHEDULES="${2:-100000}" \
    swift test "${build[@]}" --skip-build --filter 'CoreSimulationTests'
echo "core simulation: $(( $(date +%s) - start )) s"
MOMENTS_SIMULATION_SCHEDULES="${3:-2000}" MOMENTS_SHARED_SIMULATION_SCHEDULES="${4:-500}" \
    swift test "${build[@]}" --skip-build --filter 'StoreSimulationTests|SharedStoreSimulationTests'
echo "all simulations: $(( $(date +%s) - start )) s"
