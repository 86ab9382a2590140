#!/usr/bin/env bash
# Decode-speed and quality sweep of the GPU backends' switches on the synthetic models, one line
# per variant (run on the GPU machine after acceptance.sh has made the models; same env).
#   scripts/gpu/variants.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-.dev/gpu}; OUT=${OUT:-$PWD/gpu-out}; MODELS=${MODELS:-/tmp/p64-models}
P64="$BIN/p64"; mkdir -p "$OUT"
LOG="$OUT/variants.txt"
speed() {  # model backend opts...
  local f=$1 b=$2; shift 2
  local o=(); for x in "$@"; do o+=(--opt "$x"); done
  timeout 120 "$P64" decode-proxy "$f" --backend "$b" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --no-store --json "${o[@]}" 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('%8.1f tok/s [%7.1f-%7.1f] %6.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))"
}
quality() {  # model tokens backend opts...
  local f=$1 n=$2 b=$3; shift 3
  local o=(); for x in "$@"; do o+=(--opt "$x"); done
  timeout 200 "$P64" compare "$f" --backend "$b" --reference-opt int8_activations=0 --tokens "$n" --greedy 0 "${o[@]}" |
    grep teacher | sed 's/.*positions: //'
}
for m in "$@"; do
  f="$MODELS/$m.p64"
  [ -f "$f" ] || continue
  while read -r b opts; do
    [ -z "$b" ] && continue
    [ "$opts" = "-" ] && opts=""
    echo "$m $b ${opts:-default}: $(speed "$f" "$b" $opts)" | tee -a "$LOG"
  done <<'LIST'
cuda -
cuda act_quant=int8
cuda gemv_rows=1
cuda attn_chunk=32
cuda pdl=0
cuda gemv_regs=free
cuda graphs=0
cuda fused_gate_up=0
cuda qkv_fused=0
vulkan -
vulkan rows_per_workgroup=1
vulkan rows_per_workgroup=2
vulkan rows_per_workgroup=8
vulkan threads_per_row=64
vulkan threads_per_row=128
vulkan fuse_norm=0
LIST
  n=128; [[ $m == llama-3.2-3b* ]] && n=48
  for v in "cuda" "cuda act_quant=int8" "vulkan"; do
    echo "$m quality $v vs cpu(float), $n positions: $(quality "$f" $n $v 2>&1)" | tee -a "$LOG"
  done
done
