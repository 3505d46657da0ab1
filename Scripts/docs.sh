#!/usr/bin/env bash
# Builds the documentation of every library product with the toolchain's docc (no
# plugin package): symbol graphs from the compiler, one archive per module in
# .build/docs. Fails on any documentation warning.
#   bash Scripts/docs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
graphs=.build/symbol-graphs
out=.build/docs
rm -rf "$graphs" "$out" .build-docs  # a fresh build, so every graph is emitted
mkdir -p "$graphs" "$out"
for target in MomentsBFF MomentsSQLite MomentsCurl MomentsPostgres MomentsCaching MomentsTesting; do
    swift build --target "$target" --scratch-path .build-docs \
        -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$PWD/$graphs" >/dev/null
done
status=0
for module in MomentsHTTP MomentsObservability MomentsNetworking MomentsGraphQL MomentsCaching Moments MomentsBFF MomentsSQLite MomentsCurl MomentsPostgres MomentsTesting; do
    mkdir -p "$graphs/$module"
    cp "$graphs/$module".symbols.json "$graphs/$module/"
    cp "$graphs/$module"@*.symbols.json "$graphs/$module/" 2>/dev/null || true
    log=$(docc convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$graphs/$module" \
        --output-dir "$out/$module.doccarchive" --fallback-display-name "$module" \
        --fallback-bundle-identifier "org.moments.$module" 2>&1)
    warnings=$(grep -c "warning:" <<<"$log" || true)
    echo "docs: $module → $out/$module.doccarchive ($warnings warnings)"
    if [ "$warnings" != "0" ]; then grep -A3 "warning:" <<<"$log"; status=1; fi
done
exit $status
