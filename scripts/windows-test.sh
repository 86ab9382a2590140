#!/usr/bin/env bash
# The Windows stage, on Debian 12 without Windows: SQLite and PCRE2 cross-built from Debian's
# source packages (scripts/windows-deps.sh), then p64.exe (CPU and Vulkan backends), the engine
# and lab tests cross-built with mingw-w64 (cmake/mingw-w64-x86_64.cmake) and run under wine64,
# the CLI on stories260K under wine (tests/windows/cli_under_wine.sh), and the NSIS installer
# built, installed, run and uninstalled under wine (tests/packaging/nsis_install_test.sh).
# What does not run under wine is listed, with the reason, in tests/CMakeLists.txt
# (P64_TESTS_NOT_ON_WINDOWS) and below (the not_on_wine filter). docs/windows.md.
#   scripts/windows-test.sh            BUILD_DIR (build-windows), JOBS (2), NICE (nice -n 15)
# The installer it tests is left in BUILD_DIR/installer/.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build-windows}
JOBS=${JOBS:-2}
# Builds and tests run niced unless this shell already is (nice -n 15 scripts/windows-test.sh);
# NICE= turns it off.
if [[ -z ${NICE+set} ]]; then
  if (($(nice) >= 15)); then NICE=; else NICE="nice -n 15"; fi
fi
export NICE JOBS

scripts/windows-deps.sh "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
export WINEPREFIX=${WINEPREFIX:-$BUILD/wineprefix}  # wine's own state, kept out of $HOME
export WINEDEBUG=${WINEDEBUG:--all}
WINE=$(command -v wine || echo /usr/lib/wine/wine64)
# Set the wine prefix up once, before the build lists the tests through wine.
"$WINE" wineboot --init >/dev/null 2>&1
"$(dirname "$WINE")/wineserver" -w

# -O1: the stage checks behaviour under Windows, not speed (measured on Linux), and -O1 compiles in a
# third less time than Release's -O3 on CI's two cores.
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_C_FLAGS_RELEASE="-O1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/mingw-w64-x86_64.cmake" -DP64_MINGW_PREFIX="$BUILD/deps/prefix" \
      -DP64_GUI=OFF -DP64_CUDA=OFF -DP64_VULKAN=ON -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON
# Only what the tests and the installer need (cpack installs p64.exe without building all).
$NICE cmake --build "$BUILD" -j"$JOBS" --target p64 p64_engine_tests p64_lab_tests p64_fake_nvml p64_fake_nvml_no_clock

# Tests that need what wine does not give (each one's reason is beside it in not_on_wine.txt).
exclude=$(awk '!/^#/ && NF { printf "%s%s", sep, $1; sep = "|" }' tests/windows/not_on_wine.txt)
$NICE ctest --test-dir "$BUILD" -j"$JOBS" --output-on-failure ${exclude:+-E "$exclude"}
