#!/usr/bin/env bash
# One-call acceptance of the CUDA backend with the code defaults as built: the CUDA unit tests,
# decode speed (stored), then teacher-forced quality against the CPU's exact path over 128
# positions on stories260K (and greedy 200 identical) and on the 3B Q4_K_M, the 3B given what is
# left of BUDGET seconds. Prints a table last; logs travel as logs.tgz.
# Env: SPEED_MODELS (decode-proxy rows; the first two must stay the 3B Q4_K_M and smollm2 Q8_0),
# SPEED_REPEAT (3B Q4_K_M rows, default 1), SANITIZE=1 (compute-sanitizer memcheck + racecheck on
# one smollm2 decode step).
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"; L="$OUT/logs"; mkdir -p "$L"
BUDGET=${BUDGET:-570}
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
[ -f "$BIN/p64_cuda_tests.xz" ] && xz -d "$BIN/p64_cuda_tests.xz"
SPEED_MODELS=${SPEED_MODELS:-"llama-3.2-3b:Q4_K_M smollm2-360m:Q8_0"}
SPEED_MODELS="$SPEED_MODELS" OUT="$L" bash scripts/gpu/acceptance.sh models >"$L/models.log" 2>&1
S3=$M/llama-3.2-3b-Q4_K_M.p64; SM=$M/smollm2-360m-Q8_0.p64; ST=$M/stories260K.p64
timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force
row "models ready at ${SECONDS} s"
timeout 200 "$BIN/p64_cuda_tests" >"$L/cuda_tests.log" 2>&1
row "p64_cuda_tests: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/cuda_tests.log" | tr '\n' ' ') (${SECONDS} s)"
speed() { timeout 120 "$P64" decode-proxy "$@" --runs 3 --warmup 1 --db "$DB" --json 2>>"$L/speed.err" |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('decode %7.1f [%7.1f-%7.1f] %5.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))"; }
for i in $(seq "${SPEED_REPEAT:-1}"); do row "3B Q4_K_M tg128 #$i: $(speed "$S3" --backend cuda --tokens 128 --prompt-tokens 1)"; done
for m in ${SPEED_MODELS#* }; do
  row "$m tg128: $(speed "$M/${m%%:*}-${m##*:}.p64" --backend cuda --tokens 128 --prompt-tokens 1)"
done
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 "$P64" decode-proxy "$SM" --backend cuda --tokens 2 \
      --prompt-tokens 1 --runs 1 --warmup 0 --no-store >"$L/sanitizer_$tool.log" 2>&1
    row "compute-sanitizer $tool: exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/sanitizer_$tool.log" | tr -s ' ')"
  done
fi
quality() { local name=$1 limit=$2; shift 2
  timeout "$limit" "$P64" compare "$@" >"$L/compare_$name.log" 2>&1
  row "compare $name: exit $? $(grep -E 'PASS|FAIL|greedy' "$L/compare_$name.log" | tr -s ' ' | tr '\n' ' ') (${SECONDS} s)"; }
quality stories 60 "$ST" --backend cuda --tokens 128 --greedy 200
quality 3b-128 $((BUDGET - SECONDS)) "$S3" --backend cuda --tokens 128 --greedy 0
tar -czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "==== table"; cat "$TABLE"
