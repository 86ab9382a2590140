#!/usr/bin/env bash
# Stages what a GPU-machine run needs into folders that travel with `carry`: the binaries of
# the `gpu` preset build (stripped) in .dev/gpu and the test models from ../shared in
# .dev/shared (../shared does not travel). Run here after `cmake --build .dev/build-gpu`.
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${GPU_BUILD:-.dev/build-gpu}
rm -rf .dev/gpu && mkdir -p .dev/gpu .dev/shared/models
for f in app/cli/p64 tests/p64_cuda_tests tests/p64_vulkan_tests; do
  [ -f "$B/$f" ] && strip -o ".dev/gpu/$(basename "$f")" "$B/$f"
done
for m in stories260K.bin tok512.bin stories260K.gguf llama-2-tiny-random.gguf; do
  cp -f "../shared/models/$m" .dev/shared/models/
done
du -sh .dev/gpu .dev/shared
