#!/usr/bin/env bash
# Line coverage of every library target, measured by the whole test suite: one line
# per target, then the total.
#   bash Scripts/coverage.sh
set -euo pipefail
cd "$(dirname "$0")/.."

log=/tmp/moments-coverage-tests.log
if ! swift test --enable-code-coverage >"$log" 2>&1; then
    grep -E "✘|error:" "$log" | head -40
    echo "the suite failed (whole output: $log); no coverage is reported for a failing suite" >&2
    exit 1
fi
bin_dir=$(swift build --show-bin-path)
profdata="$bin_dir/codecov/default.profdata"
tests_binary="$bin_dir/MomentsPackageTests.xctest"
# The toolchain's llvm-cov reads the toolchain's profile format; a system one may not.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
llvm_cov="$toolchain_bin/llvm-cov"
[ -x "$llvm_cov" ] || llvm_cov=$(command -v llvm-cov)

targets=(MomentsSupport MomentsObservability MomentsHTTP MomentsNetworking MomentsGraphQL MomentsCaching
         Moments MomentsSQLite MomentsCurl MomentsPostgres MomentsTesting MomentsCommandLine)
for target in "${targets[@]}"; do
    "$llvm_cov" report "$tests_binary" -instr-profile "$profdata" "Sources/$target" > "/tmp/moments-coverage-$target.txt"
    printf '%-22s %s\n' "$target" "$(awk '/^TOTAL/ { print $(NF-3) }' "/tmp/moments-coverage-$target.txt")"
done
paths=("${targets[@]/#/Sources/}")
"$llvm_cov" report "$tests_binary" -instr-profile "$profdata" "${paths[@]}" > /tmp/moments-coverage.txt
echo "all library targets: $(awk '/^TOTAL/ { print $(NF-3) }' /tmp/moments-coverage.txt)"
