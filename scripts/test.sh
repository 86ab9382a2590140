#!/usr/bin/env bash
# Configure, build and run the whole test suite (the README's second command), then the same
# suite under ASan+UBSan, every libFuzzer target for FUZZ_SECONDS (default 10) each, and the
# Windows stage (scripts/windows-test.sh: p64.exe and the engine, lab and CLI tests under wine64,
# the NSIS installer installed, run and uninstalled). A stage that cannot run fails the suite, so a
# green run means every stage ran; P64_SKIP_STAGES="asan windows" (either or both) leaves them out
# on purpose, and says so.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j"$(nproc)"
export QT_QPA_PLATFORM=offscreen
skipped() { [[ " ${P64_SKIP_STAGES:-} " == *" $1 "* ]]; }
not_run() { echo "test.sh: $*" >&2; not_run_count=$((${not_run_count:-0} + 1)); }
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" --timeout 900
if skipped asan; then
  echo "test.sh: the ASan+UBSan suite and the fuzz targets left out (P64_SKIP_STAGES)" >&2
elif command -v clang++-14 >/dev/null && compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  BUILD_DIR=build-asan ./scripts/test-asan.sh
  BUILD_DIR=build-asan ./scripts/fuzz.sh
else
  not_run "the ASan+UBSan suite and the fuzz targets did NOT run: clang-14 and libclang-rt-14-dev" \
          "are missing (./scripts/setup.sh installs them; P64_SKIP_STAGES=asan leaves them out)"
fi
# The Windows stage installs what it lacks with apt (root or sudo) and fetches Debian's sqlite3
# and pcre2 sources; ./scripts/setup.sh has done both on a machine set up by the README.
windows_tools=(x86_64-w64-mingw32-g++ makensis)
missing=()
for t in "${windows_tools[@]}"; do command -v "$t" >/dev/null || missing+=("$t"); done
[[ -x /usr/lib/wine/wine64 ]] || command -v wine64 >/dev/null || missing+=(wine64)
if skipped windows; then
  echo "test.sh: the Windows stage left out (P64_SKIP_STAGES)" >&2
elif ((${#missing[@]} == 0)) || (($(id -u) == 0)) || sudo -n true 2>/dev/null; then
  # Its dependencies first, on their own, so that a stage that could not start (Debian's archive
  # out of reach) is told apart from one that failed.
  if BUILD_DIR=build-windows ./scripts/windows-deps.sh; then
    BUILD_DIR=build-windows ./scripts/windows-test.sh
  else
    not_run "the Windows stage did NOT run: scripts/windows-deps.sh failed (above): apt could not" \
            "install its tools or fetch Debian's sqlite3 and pcre2 sources (P64_SKIP_STAGES=windows leaves it out)"
  fi
else
  not_run "the Windows stage did NOT run: ${missing[*]} missing, and apt needs root or sudo" \
          "(./scripts/setup.sh installs them; P64_SKIP_STAGES=windows leaves it out)"
fi
if ((${not_run_count:-0} > 0)); then
  echo "test.sh: FAILED: $not_run_count stage(s) could not run (above); every test that did run passed" >&2
  exit 1
fi
