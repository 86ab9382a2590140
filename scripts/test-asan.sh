#!/usr/bin/env bash
# The whole unit-test suite under AddressSanitizer + UndefinedBehaviorSanitizer (clang-14,
# the `asan` preset with GUI, CUDA and Vulkan off). The same build holds the fuzz targets
# (P64_FUZZ=ON adds libFuzzer's coverage hooks), so scripts/fuzz.sh after this builds nothing
# new. Any sanitizer report fails its test: UBSan halts, ASan aborts, leaks count.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-asan}
cmake --preset asan -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DP64_VULKAN=OFF -DP64_FUZZ=ON
cmake --build "$BUILD" -j"$(nproc)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The packaging test (a .deb built, installed and run) is the main build's: packaging an
# instrumented binary would check nothing more and costs a minute of CI.
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" -LE "fuzz|packaging" --timeout 1800
