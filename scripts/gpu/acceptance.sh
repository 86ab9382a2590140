#!/usr/bin/env bash
# The GPU backends' acceptance run on the GPU machine (docs/cuda-backend.md): correctness against
# the CPU backend, then decode speed on `p64 synth` models of real shapes, for each GPU backend.
# Binaries are built here with the `gpu` preset and carried in $BIN (see scripts/gpu/stage.sh).
#
#   scripts/gpu/acceptance.sh [STAGE ...]    stages: models tests compare speed timeline ab (default: all)
#
# Env: BIN (carried binaries, default .dev/gpu), OUT (logs; default ./gpu-out), MODELS (a scratch
# folder for the generated models, default /tmp/p64-models), BACKENDS (default "cuda vulkan"),
# SPEED_MODELS (names from the list below).
set -uo pipefail
cd "$(dirname "$0")/../.."
BIN=${BIN:-.dev/gpu}
OUT=${OUT:-$PWD/gpu-out}
MODELS=${MODELS:-/tmp/p64-models}
BACKENDS=${BACKENDS:-cuda vulkan}
SPEED_MODELS=${SPEED_MODELS:-"smollm2-360m:Q8_0 llama-3.2-3b:Q4_K_M llama-3.2-3b:Q8_0 llama-3.2-1b:Q4_K_M"}
STAGES=${*:-tests compare speed timeline ab}
mkdir -p "$OUT" "$MODELS"
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
P64="$BIN/p64"
DB="$OUT/lab.db"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
note() { echo "$*" | tee -a "$SUMMARY"; }
has() { [[ " $STAGES " == *" $1 "* ]]; }

source scripts/gpu/vulkan-loader.sh

nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv | tee -a "$SUMMARY"
"$P64" --version | tee -a "$SUMMARY"

# model NAME:QUANT -> path of its .p64 (generated once per machine)
model() {
  local preset=${1%%:*} quant=${1##*:}
  local p="$MODELS/$preset-$quant.p64"
  if [ ! -f "$p" ]; then
    timeout 300 "$P64" synth --preset "$preset" --quant "$quant" -o "$MODELS/$preset-$quant.gguf" -q >&2 &&
      timeout 300 "$P64" convert "$MODELS/$preset-$quant.gguf" "$p" --soa -q >&2 &&
      rm -f "$MODELS/$preset-$quant.gguf"
  fi
  echo "$p"
}

if has models; then
  for m in $SPEED_MODELS; do note "$m: $(model "$m")"; done
fi

if has tests; then
  for t in $BACKENDS; do
    [ -x "$BIN/p64_${t}_tests" ] || continue
    # each test prints its start, so a hang names itself; the whole binary is bounded
    timeout "${TEST_TIMEOUT:-150}" "$BIN/p64_${t}_tests" >"$OUT/${t}_tests.log" 2>&1
    note "unit tests $t: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/${t}_tests.log" | tr '\n' ' '))"
    grep -E '^\[  FAILED  \]' "$OUT/${t}_tests.log" | head -20 | tee -a "$SUMMARY"
    grep -E '^\[ RUN' "$OUT/${t}_tests.log" | tail -1 | sed 's/^/  last started: /' | tee -a "$SUMMARY"
  done
fi

if has compare; then
  S="$MODELS/stories260K.p64"
  [ -f "$S" ] || "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$S" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force
  for b in $BACKENDS; do
    timeout 120 "$P64" compare "$S" --backend "$b" --tokens 128 --greedy 200 >"$OUT/compare_${b}_stories.log" 2>&1
    note "compare $b stories260K: exit $? | $(grep -E 'teacher|greedy' "$OUT/compare_${b}_stories.log" | tr -s ' ' | tr '\n' '|')"
    for m in $SPEED_MODELS; do
      f=$(model "$m")
      timeout 240 "$P64" compare "$f" --backend "$b" --tokens 128 --greedy 0 >"$OUT/compare_${b}_${m/:/_}.log" 2>&1
      note "compare $b $m: exit $? | $(grep -E 'teacher' "$OUT/compare_${b}_${m/:/_}.log" | tr -s ' ')"
    done
  done
fi

if has speed; then
  for m in $SPEED_MODELS; do
    f=$(model "$m")
    note "$m: $(stat -c %s "$f") bytes"
    for b in $BACKENDS; do
      timeout 180 "$P64" decode-proxy "$f" --backend "$b" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --db "$DB" \
        --json >"$OUT/speed_${b}_${m/:/_}.json" 2>"$OUT/speed_${b}_${m/:/_}.err"
      note "speed $b $m: exit $? $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(' '.join('%s %s' % (k, d[k]) for k in ('decode_tok_s','prefill_tok_s','effective_gbs','bandwidth_share')))" "$OUT/speed_${b}_${m/:/_}.json" 2>/dev/null)"
    done
  done
fi

if has timeline; then
  f=$(model llama-3.2-3b:Q4_K_M)
  for b in $BACKENDS; do
    timeout 120 "$P64" timeline "$f" --backend "$b" --tokens 16 --trace "$OUT/trace_${b}_3b.json" --db "$DB" >"$OUT/timeline_${b}_3b.log" 2>&1
    note "timeline $b 3B: exit $?"
    sed -n '1,40p' "$OUT/timeline_${b}_3b.log" >>"$SUMMARY"
  done
fi

if has ab; then
  f=$(model llama-3.2-3b:Q4_K_M)
  for sw in graphs fused_gate_up qkv_fused pdl; do
    timeout 300 "$P64" ab "$f" --a "backend=cuda" --b "backend=cuda,opt.$sw=0" --runs 3 --tokens 128 --prompt-tokens 1 \
      --db "$DB" >"$OUT/ab_cuda_$sw.log" 2>&1
    note "ab cuda $sw=0: exit $? $(grep -iE 'verdict|ratio' "$OUT/ab_cuda_$sw.log" | tr -s ' ' | tr '\n' '|')"
  done
fi
echo "==== summary"
cat "$SUMMARY"
# what comes back from the GPU machine is limited to a few files: one archive holds the logs
tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude=logs.tgz . 2>/dev/null
