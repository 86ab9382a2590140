#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang-14, ASan+UBSan), writes their seed corpora
# from ../shared and small generated files, and runs every target for FUZZ_SECONDS each
# (default 10: the CI run; a long session: FUZZ_SECONDS=3600). Inputs that found new coverage
# accumulate in $BUILD/fuzz/corpus; a crash leaves its input in $BUILD/fuzz/artifacts and fails
# the run (reproduce: $BUILD/tests/fuzz/p64_fuzz_<name> <that file>).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-asan}
SECONDS_EACH=${FUZZ_SECONDS:-10}
cmake --preset asan -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DP64_VULKAN=OFF -DP64_FUZZ=ON \
  -DP64_FUZZ_SECONDS="$SECONDS_EACH"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" -L fuzz --output-on-failure -j"${FUZZ_JOBS:-$(nproc)}"
