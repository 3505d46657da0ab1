#!/usr/bin/env bash
# Line coverage of the library targets (MomentsNetworking, Moments, MomentsSQLite),
# measured by the whole test suite.
#   bash Scripts/coverage.sh            # prints the llvm-cov report and the total
set -euo pipefail
cd "$(dirname "$0")/.."

swift test --enable-code-coverage >/dev/null
bin_dir=$(swift build --show-bin-path)
profdata="$bin_dir/codecov/default.profdata"
tests_binary="$bin_dir/MomentsPackageTests.xctest"
# The toolchain's llvm-cov reads the toolchain's profile format; a system one may not.
toolchain_bin=$(dirname "$(readlink -f "$(command -v swift)")")
llvm_cov="$toolchain_bin/llvm-cov"
[ -x "$llvm_cov" ] || llvm_cov=$(command -v llvm-cov)

"$llvm_cov" report "$tests_binary" -instr-profile "$profdata" \
    Sources/MomentsNetworking Sources/Moments Sources/MomentsSQLite \
    | tee /tmp/moments-coverage.txt
total=$(awk '/^TOTAL/ { print $(NF-3) }' /tmp/moments-coverage.txt)
echo "library line coverage: $total"
