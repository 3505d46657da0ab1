#!/usr/bin/env bash
# The main job from a fresh clone: installs what is missing (Scripts/setup.sh demo),
# then builds and runs `moments demo`, which starts the reference BFF on a free loopback
# port and runs the whole story against it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash Scripts/setup.sh demo
echo "demo: building moments (the first build takes a few minutes)…"
swift build --product moments
exec swift run --skip-build moments demo "$@"
