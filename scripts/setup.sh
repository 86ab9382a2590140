#!/usr/bin/env bash
# The README's first command: install the build dependencies (Debian 12, apt only), build
# everything that can be built here, then run the main job on a model the project makes itself:
# a synthetic SmolLM2-135M-shaped model, converted to P64 and measured with decode-proxy on the
# best backend present (Vulkan on a real GPU, else the CPU).
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends \
  build-essential cmake ninja-build pkg-config git ca-certificates \
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev libqt6svg6-dev libgl-dev libxkbcommon-dev \
  libvulkan-dev glslc mesa-vulkan-drivers vulkan-validationlayers \
  libsqlite3-dev sqlite3 googletest libgtest-dev nlohmann-json3-dev libcli11-dev libpcre2-dev \
  clang-14 libclang-rt-14-dev xvfb dpkg-dev file appstream \
  g++-mingw-w64-x86-64 wine64 nsis tcl
# The Windows stage's SQLite and PCRE2, cross-built from Debian's source packages (apt-get source).
BUILD_DIR=build-windows scripts/windows-deps.sh

BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build "$BUILD" -j"$(nproc)"

P64="$BUILD/app/cli/p64"
WORK=${P64_WORK_DIR:-$BUILD/first-run}
mkdir -p "$WORK"
"$P64" --version
"$P64" synth --preset smollm2-135m --quant Q8_0 -o "$WORK/smollm2-135m-q8_0.gguf" --force
"$P64" convert "$WORK/smollm2-135m-q8_0.gguf" "$WORK/smollm2-135m-q8_0.p64" --soa --force
"$P64" verify "$WORK/smollm2-135m-q8_0.p64"
"$P64" decode-proxy "$WORK/smollm2-135m-q8_0.p64" --backend auto --tokens 32 --runs 2 --db "$WORK/lab.db"
"$P64" report --format md --db "$WORK/lab.db"
