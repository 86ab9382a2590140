#!/usr/bin/env bash
# Configure, build and run the whole test suite (the README's second command), then the same
# suite under ASan+UBSan and every libFuzzer target for FUZZ_SECONDS (default 20) each.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j"$(nproc)"
export QT_QPA_PLATFORM=offscreen
ctest --test-dir "$BUILD" --output-on-failure -j"$(nproc)" --timeout 900
if command -v clang++-14 >/dev/null && compgen -G "/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  BUILD_DIR=build-asan ./scripts/test-asan.sh
  BUILD_DIR=build-asan ./scripts/fuzz.sh
else
  echo "test.sh: the ASan+UBSan suite and the fuzz targets did NOT run: clang-14 and libclang-rt-14-dev" \
       "are missing (./scripts/setup.sh installs them)" >&2
fi
