#!/usr/bin/env bash
# Cross-builds the portable part of the engine for Windows (mingw-w64) with the engine tests
# that link without SQLite/PCRE2, and runs them under wine (tests/windows/CMakeLists.txt says
# what is left out and why). Slow on a small machine (the whole engine is compiled again), so
# it is not part of ./scripts/test.sh. Needs: g++-mingw-w64-x86-64 wine64 googletest.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-windows-check}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
export WINEPREFIX=${WINEPREFIX:-$BUILD/wineprefix}  # wine's own state, kept out of $HOME
cmake -S tests/windows -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64-x86_64.cmake"
cmake --build "$BUILD" -j"$(nproc)"
ctest --test-dir "$BUILD" --output-on-failure
