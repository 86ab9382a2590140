#!/usr/bin/env bash
# Builds p64 once per compile-time GEMV variant (here, for the GPU machine): gemv.cu is compiled
# again with the variant's -D flags, swapped into a copy of libp64cuda.a, and p64 linked against
# it with the gpu build's own commands. Writes .dev/gpu-variants/p64-<name>.xz (compressed, so
# several fit in a carry); binary-variants.sh runs them after `xz -dk`.
#   scripts/gpu/build-gemv-variants.sh NAME="-DFLAG=V ..." [NAME="..." ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
B=${GPU_BUILD:-$PWD/.dev/build-gpu}; OUTD=$PWD/.dev/gpu-variants; W=$(mktemp -d)
mkdir -p "$OUTD"
cd "$B"
compile=$(ninja -t commands app/cli/p64 | grep -E "nvcc .* -c [^ ]*/gemv\.cu ")
link=$(ninja -t commands app/cli/p64 | tail -1)
for spec in "$@"; do
  name=${spec%%=*}; flags=${spec#*=}
  mkdir -p "$W/$name"
  eval "$(echo "$compile" | sed "s# -c # $flags -c #; s# -o [^ ]*gemv.cu.o# -o $W/$name/gemv.cu.o#; s# -MD -MT [^ ]* -MF [^ ]*##")"
  cp backends/cuda/libp64cuda.a "$W/$name/"
  (cd "$W/$name" && ar r libp64cuda.a gemv.cu.o)
  eval "$(echo "${link#: && }" | sed "s#backends/cuda/libp64cuda.a#$W/$name/libp64cuda.a#; s# -o app/cli/p64# -o $W/$name/p64#; s# && :\$##")"
  strip "$W/$name/p64" && xz -T2 -3 -c "$W/$name/p64" >"$OUTD/p64-$name.xz"
  echo "$name ($flags): $(du -h "$OUTD/p64-$name.xz" | cut -f1)"
done
rm -rf "$W"
