#!/usr/bin/env bash
# One GPU-machine call that checks and times the CUDA decode-step switches (pdl, fuse_norm and
# their neighbours): unit tests, compute-sanitizer on a decode step, quality against the CPU
# reference, decode speed of every variant on the synthetic models, and a timeline of the best.
# Run from the repository root on the GPU machine with OUT set and .dev/gpu, .dev/shared, .gl
# carried (scripts/gpu/stage.sh). Prints a short table last; logs go to $OUT/logs.tgz.
#   scripts/gpu/decode-tuning.sh [VARIANT ...]   (default: the list below; a variant is
#                                                 space-separated NAME=VALUE switches, or '-')
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
opts() { local o=(); for x in $1; do [ "$x" = "-" ] || o+=(--opt "$x"); done; echo "${o[@]}"; }

SPEED_MODELS="smollm2-360m:Q8_0 llama-3.2-3b:Q4_K_M" TEST_TIMEOUT=240 bash scripts/gpu/acceptance.sh models tests \
  >"$OUT/acceptance.log" 2>&1
grep -E "unit tests|FAILED|last started" "$OUT/acceptance.log" | tee -a "$TABLE"
S3=$M/llama-3.2-3b-Q4_K_M.p64; SM=$M/smollm2-360m-Q8_0.p64; ST=$M/stories260K.p64
timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force

BEST=${BEST:-"pdl=1 fuse_norm=1"}
q() { timeout "$1" "$P64" compare "${@:2}" 2>&1 | grep -E "teacher|greedy:|greedy," | tr -s ' ' | tr '\n' ' '; }
row "quality stories260K cuda $BEST: $(q 90 "$ST" --backend cuda --tokens 128 --greedy 200 $(opts "$BEST"))"
row "quality smollm2 cuda $BEST: $(q 120 "$SM" --backend cuda --tokens 128 --greedy 0 $(opts "$BEST"))"
row "quality 3B cuda default: $(q 150 "$S3" --backend cuda --tokens 32 --greedy 0)"
row "quality 3B cuda $BEST: $(q 150 "$S3" --backend cuda --tokens 32 --greedy 0 $(opts "$BEST"))"

speed() { timeout 120 "$P64" decode-proxy "$@" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --db "$DB" --json 2>>"$OUT/speed.err" |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('%7.1f tok/s [%7.1f-%7.1f] %5.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))"; }
if [ $# -gt 0 ]; then VARIANTS=("$@"); else
  VARIANTS=("-" "pdl=1" "fuse_norm=1" "pdl=1 fuse_norm=1" "pdl=1 fuse_norm=1 gemv_rows=4" "pdl=1 fuse_norm=1 gemv_rows=1"
            "pdl=1 fuse_norm=1 attn_chunk=16" "pdl=1 fuse_norm=1 attn_chunk=64" "pdl=1 fuse_norm=1 act_quant=int8"); fi
for v in "${VARIANTS[@]}"; do row "speed 3B-Q4_K_M cuda [$v]: $(speed "$S3" --backend cuda $(opts "$v"))"; done
for v in "-" "$BEST"; do row "speed smollm2-Q8_0 cuda [$v]: $(speed "$SM" --backend cuda $(opts "$v"))"; done
timeout 90 "$P64" timeline "$S3" --backend cuda --tokens 16 --trace "$OUT/trace_cuda_3b.json" --db "$DB" $(opts "$BEST") \
  >"$OUT/timeline_cuda.log" 2>&1
sed -n '/group/,$p' "$OUT/timeline_cuda.log" | head -16 | tee -a "$TABLE"
if [ "${WITH_Q8:-1}" = 1 ]; then
  S8=$(SPEED_MODELS="llama-3.2-3b:Q8_0" bash scripts/gpu/acceptance.sh models >/dev/null 2>&1; echo "$M/llama-3.2-3b-Q8_0.p64")
  row "3B Q8_0: $(stat -c %s "$S8" 2>/dev/null) bytes"
  for v in "-" "$BEST"; do row "speed 3B-Q8_0 cuda [$v]: $(speed "$S8" --backend cuda $(opts "$v"))"; done
fi
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$P64" decode-proxy "$SM" --backend cuda --tokens 2 \
      --prompt-tokens 1 --runs 1 --warmup 0 --no-store $(opts "$BEST") >"$OUT/sanitizer_$tool.log" 2>&1
    row "compute-sanitizer $tool, smollm2 Q8_0 decode step ($BEST): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer_$tool.log" | tr '\n' ' ')"
  done
else
  row "compute-sanitizer: not on this machine"
fi

tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude=logs.tgz --exclude='*.p64' . 2>/dev/null
echo "==== table"; cat "$TABLE"
