#!/usr/bin/env bash
# Line coverage of every library target, measured by the whole test suite: one line
# per target, then the total. Child processes the tests start (the `moments` tool, crash
# writers, transfer probes) count too: each writes its own profile, and those a killed
# child left torn are left out of the merge.
#   bash Scripts/coverage.sh
set -euo pipefail
cd "$(dirname "$0")/.."

bin_dir=$(swift build --show-bin-path)
children="$bin_dir/codecov-children"
rm -rf "$children"
mkdir -p "$children"
log=/tmp/moments-coverage-tests.log
if ! MOMENTS_CHILD_PROFILE_DIR="$children" swift test --enable-code-coverage >"$log" 2>&1; then
    grep -E "✘|error:" "$log" | head -40
    echo "the suite failed (whole output: $log); no coverage is reported for a failing suite" >&2
    exit 1
fi
# The toolchain's llvm tools read the toolchain's profile format; a system one may not.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
llvm_cov="$toolchain_bin/llvm-cov"
llvm_profdata="$toolchain_bin/llvm-profdata"
[ -x "$llvm_cov" ] || llvm_cov=$(command -v llvm-cov)
[ -x "$llvm_profdata" ] || llvm_profdata=$(command -v llvm-profdata)

profdata="$bin_dir/codecov/with-children.profdata"
inputs=("$bin_dir/codecov/default.profdata")
torn=0
for profile in "$children"/*.profraw; do
    [ -e "$profile" ] || continue
    if "$llvm_profdata" show "$profile" >/dev/null 2>&1; then inputs+=("$profile"); else torn=$((torn + 1)); fi
done
"$llvm_profdata" merge -sparse -o "$profdata" "${inputs[@]}"
echo "profiles: the test process and $(( ${#inputs[@]} - 1 )) child processes ($torn torn, left out)"

objects=("$bin_dir/MomentsPackageTests.xctest")
for executable in moments MomentsCrashWriter MomentsTransferProbe; do
    [ -x "$bin_dir/$executable" ] && objects+=(-object "$bin_dir/$executable")
done
targets=(MomentsSupport MomentsObservability MomentsHTTP MomentsNetworking MomentsGraphQL MomentsCaching
         Moments MomentsSQLite MomentsCurl MomentsPostgres MomentsTesting MomentsCommandLine)
for target in "${targets[@]}"; do
    "$llvm_cov" report "${objects[@]}" -instr-profile "$profdata" "Sources/$target" > "/tmp/moments-coverage-$target.txt"
    printf '%-22s %s\n' "$target" "$(awk '/^TOTAL/ { print $(NF-3) }' "/tmp/moments-coverage-$target.txt")"
done
paths=("${targets[@]/#/Sources/}")
"$llvm_cov" report "${objects[@]}" -instr-profile "$profdata" "${paths[@]}" > /tmp/moments-coverage.txt
echo "all library targets: $(awk '/^TOTAL/ { print $(NF-3) }' /tmp/moments-coverage.txt)"
