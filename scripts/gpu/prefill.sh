#!/usr/bin/env bash
# The batched prefill of the CUDA or Vulkan backend on the GPU machine: its tests (GEMM per
# weight format, prefill vs the CPU backend, decode after prefill), then pp512 on `p64 synth
# --preset llama-3.2-3b --quant Q4_K_M` with prefill=stepwise vs prefill=batched and the
# backend's prefill switches, one timeline of the batched prefill split by op, and greedy text
# after either prefill. Three files go to $OUT (tests.log; runs.log, every other log appended;
# summary.txt); the summary is printed last.
#
# Env: BACKEND (cuda, the default, or vulkan), BIN (folder with p64 and p64_<backend>_tests;
# default .dev/prefill-run), OUT (default ./gpu-out), MODELS (scratch for the generated model;
# default /tmp/p64-models), P64_SHARED_DIR (test models; default $BIN/shared), PP (prompt
# tokens; default 512).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-.dev/prefill-run}
OUT=${OUT:-$PWD/gpu-out}
MODELS=${MODELS:-/tmp/p64-models}
PP=${PP:-512}
BACKEND=${BACKEND:-cuda}
[ "$BACKEND" = vulkan ] && source scripts/gpu/vulkan-loader.sh
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/$BIN/shared}
mkdir -p "$OUT" "$MODELS"
P64="$BIN/p64"
TABLE="$OUT/summary.txt"
LOG="$OUT/runs.log"
W=$(mktemp -d)  # per-step outputs, appended to $LOG
: >"$TABLE"
: >"$LOG"
row() { echo "$*" >>"$TABLE"; }
keep() { for f in "$@"; do echo "==== $(basename "$f")" >>"$LOG"; cat "$f" >>"$LOG" 2>/dev/null; done; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader | sed 's/^/gpu: /' >>"$TABLE"

# 1. tests (each prints its start, so a hang names itself)
if [ "$BACKEND" = vulkan ]; then
  timeout "${TEST_TIMEOUT:-150}" "$BIN/p64_vulkan_tests" --gtest_filter='VulkanPrefill*:VulkanQuality.*:VulkanBackendTest.*' \
    >"$OUT/tests.log" 2>&1
else
  timeout "${TEST_TIMEOUT:-150}" "$BIN/p64_cuda_tests" \
    --gtest_filter='*PrefillGemm*:CudaPrefill*:CudaQuality.*:CudaBackend.*' >"$OUT/tests.log" 2>&1
fi
row "tests: exit $? | $(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?[,.]' "$OUT/tests.log" | tr '\n' ' ')"
grep -E '^\[  FAILED  \]' "$OUT/tests.log" | head -20 >>"$TABLE"
grep -E '^batched prefill|^decode after prefill' "$OUT/tests.log" | sed 's/^/  /' >>"$TABLE"

# 2. the 3B model (generated once per machine)
M="$MODELS/llama-3.2-3b-Q4_K_M.p64"
if [ ! -f "$M" ]; then
  start=$(date +%s)
  timeout 200 "$P64" synth --preset llama-3.2-3b --quant Q4_K_M -o "$MODELS/3b.gguf" -q >"$W/synth.log" 2>&1 &&
    timeout 120 "$P64" convert "$MODELS/3b.gguf" "$M" --soa -q >>"$W/synth.log" 2>&1 && rm -f "$MODELS/3b.gguf"
  row "synth + convert llama-3.2-3b Q4_K_M: exit $? in $(($(date +%s) - start)) s"
  keep "$W/synth.log"
fi

# 3. pp$PP (prefill tok/s = prompt tokens / prefill wall time, median [min-max] of 3 runs)
pp() {  # pp PROMPT_TOKENS TAG SWITCHES...
  local n=$1 tag=$2
  shift 2
  timeout 120 "$P64" decode-proxy "$M" --backend "$BACKEND" --prompt-tokens "$n" --tokens 1 --runs 3 --warmup 1 \
    --no-store "$@" >"$W/pp${n}_$tag.log" 2>&1
  local rc=$?
  row "pp$n $tag: exit $rc | prefill tok/s $(grep -E '^  prefill tok/s' "$W/pp${n}_$tag.log" | sed 's/^  prefill tok\/s *//')"
  keep "$W/pp${n}_$tag.log"
}
if [ -f "$M" ] && [ "$BACKEND" = vulkan ]; then
  pp "$PP" batched --opt prefill=batched
  pp "$PP" stepwise --opt prefill=stepwise
  pp "$PP" f32-tiles --opt prefill_f16=0
  pp "$PP" coopmat --opt prefill_coopmat=1
  pp "$PP" coopmat-no-split-k --opt prefill_coopmat=1 --opt prefill_split_k=1
  pp "$PP" no-split-k --opt prefill_split_k=1
  pp "$PP" tile-rows64 --opt prefill_tile_rows=64
  pp "$PP" chunk256 --opt prefill_ubatch=256
  pp 32 batched --opt prefill=batched
  pp 32 stepwise --opt prefill=stepwise
  pp 32 coopmat --opt prefill_coopmat=1
  pp 8 batched --opt prefill=batched
  pp 8 stepwise --opt prefill=stepwise
  pp 1 default
  pp 2048 batched --opt prefill=batched
elif [ -f "$M" ]; then
  pp "$PP" batched --opt prefill=batched
  pp "$PP" stepwise --opt prefill=stepwise
  pp "$PP" batched-chunk256 --opt prefill=batched --opt prefill_chunk=256
  pp "$PP" splitk --opt prefill_splitk=1
  pp "$PP" attn-group4 --opt prefill_attn_group=4
  pp "$PP" splitk+attn-group4 --opt prefill_splitk=1 --opt prefill_attn_group=4
  pp 2048 batched --opt prefill=batched
fi

# 4. where the batched prefill's time goes (CUDA-event spans per op; small ops are inflated)
timeline() {  # timeline TAG SWITCHES...
  local tag=$1
  shift
  timeout 90 "$P64" timeline "$M" --backend "$BACKEND" --prompt-tokens "$PP" --tokens 2 --trace "$W/trace_$tag.json" \
    --no-store "$@" >"$W/timeline_$tag.log" 2>&1
  row "timeline $tag: exit $? | $(grep -E 'prefill of' "$W/timeline_$tag.log" | tr -s ' ')"
  keep "$W/timeline_$tag.log"
  if command -v python3 >/dev/null && [ -f "$W/trace_$tag.json" ]; then
    python3 - "$W/trace_$tag.json" >>"$TABLE" <<'EOF'
import collections, json, re, sys
ev = json.load(open(sys.argv[1]))
ev = ev.get("traceEvents", ev) if isinstance(ev, dict) else ev
per = collections.Counter()
for e in ev:
    if e.get("ph") == "X" and e.get("tid") == 1:
        per[re.sub(r" L\d+$", "", e["name"])] += e.get("dur", 0)
tot = sum(per.values()) or 1
print("  prefill spans: " + ", ".join(f"{k} {v/1e3:.2f} ms ({100*v/tot:.0f}%)" for k, v in per.most_common(9)))
EOF
  fi
}
if [ -f "$M" ] && [ "$BACKEND" = vulkan ]; then
  timeline default
  timeline f32-tiles --opt prefill_f16=0
  timeline coopmat --opt prefill_coopmat=1
elif [ -f "$M" ]; then
  timeline default
  timeline opt-ins --opt prefill_splitk=1 --opt prefill_attn_group=4
fi

# 5. greedy text after a batched vs a stepwise prefill (stories260K is trained: real margins)
gen() {  # gen NAME MODEL_ARGS...
  local name=$1
  shift
  for mode in batched stepwise; do
    timeout 60 "$P64" generate "$@" --backend "$BACKEND" --temp 0 --tokens 48 --opt prefill=$mode \
      --prompt "Once upon a time, there was a little girl named Lily. She loved to play outside with her friends in the park near her house. One day" \
      >"$W/gen_${name}_$mode.txt" 2>"$W/gen_${name}_$mode.err"
  done
  if [ ! -s "$W/gen_${name}_batched.txt" ] || [ ! -s "$W/gen_${name}_stepwise.txt" ]; then
    row "greedy 48 tokens $name: a run produced no text (runs.log has its errors)"
  elif cmp -s "$W/gen_${name}_batched.txt" "$W/gen_${name}_stepwise.txt"; then
    row "greedy 48 tokens $name: batched == stepwise"
  else
    row "greedy 48 tokens $name: batched != stepwise (runs.log has both)"
  fi
  keep "$W/gen_${name}"_*
}
gen stories --model "$P64_SHARED_DIR/models/stories260K.bin" --tokenizer "$P64_SHARED_DIR/models/tok512.bin"
[ -f "$M" ] && gen 3b --model "$M"

rm -rf "$W"
echo "==== prefill summary"
cat "$TABLE"
