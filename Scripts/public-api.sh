#!/usr/bin/env bash
# Counts each library's public declarations, as the compiler sees them (the symbol graph
# at public access): types, members, protocol requirements, enum cases and operators
# declared in this package's sources, not those the compiler synthesizes.
#   bash Scripts/public-api.sh             the count per module
#   bash Scripts/public-api.sh MODULE      and every public declaration of MODULE
set -euo pipefail
cd "$(dirname "$0")/.."
swift package dump-symbol-graph --minimum-access-level public >/dev/null 2>&1 || { echo "public-api: the symbol graph could not be built (swift build first)"; exit 1; }
python3 - "${1:-}" <<'PY'
import glob, json, sys
listed = sys.argv[1]
total = 0
for path in sorted(glob.glob(".build/*/symbolgraph/*.symbols.json")):
    module = path.rsplit("/", 1)[1].split(".symbols.json")[0]
    if "@" in module or not module.startswith("Moments") or module.endswith(("Tests", "TestSupport", "Baseline")):
        continue
    symbols = [s for s in json.load(open(path))["symbols"] if "location" in s and s["location"]["uri"].find("/Sources/") >= 0]
    print(f"{module}: {len(symbols)} public declarations")
    total += len(symbols)
    if module == listed:
        for s in sorted(symbols, key=lambda s: ".".join(s["pathComponents"])):
            print(f"  {s['kind']['displayName'].lower():<16} {'.'.join(s['pathComponents'])}")
print(f"all libraries: {total} public declarations")
PY
