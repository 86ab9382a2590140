#!/usr/bin/env bash
# Decode speed of several builds of p64 (compile-time variants, e.g. the GEMV's register cap)
# on the same synthetic 3B model, each with the same switch sets. Run on the GPU machine.
#   scripts/gpu/binary-variants.sh DIR "SWITCHES" ["SWITCHES" ...]   (DIR holds p64-* binaries)
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1; shift; M=${MODELS:-/tmp/p64-models}; f=$M/llama-3.2-3b-Q4_K_M.p64
first=$(ls "$D"/p64-* | head -1)
mkdir -p "$M"
[ -f "$f" ] || { timeout 300 "$first" synth --preset llama-3.2-3b --quant Q4_K_M -o "$M/s.gguf" -q &&
  timeout 300 "$first" convert "$M/s.gguf" "$f" --soa -q && rm -f "$M/s.gguf"; }
for b in "$D"/p64-*; do
  for v in "$@"; do
    o=(); for x in $v; do o+=(--opt "$x"); done
    r=$(timeout 90 "$b" decode-proxy "$f" --backend cuda --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --no-store --json "${o[@]}" 2>/dev/null |
      python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('%7.1f tok/s [%7.1f-%7.1f]' % (m['median'], m['min'], m['max']))")
    echo "$(basename "$b") [$v]: $r"
  done
done
