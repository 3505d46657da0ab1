#!/usr/bin/env bash
# The tests from a fresh clone: installs what is missing (Scripts/setup.sh test), then
# builds and runs every test. This is what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh test
echo "test: building the package and its tests (the first build takes a few minutes)…"
swift build --build-tests --explicit-target-dependency-import-check error
echo "test: running the tests…"
exec swift test --skip-build "$@"
