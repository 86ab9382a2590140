#!/usr/bin/env bash
# Issue 22 round on the GPU machine: the tiled decode GEMV layout (gemv_layout=tiles) against
# the block layout and against llama.cpp on the same GGUF files, every share against this
# call's own passport read ceiling. Correctness first (GEMV unit tests incl. the tiled forms,
# the full CUDA suite, compare vs the CPU's exact path, compute-sanitizer), then speed.
# Carry .dev/gpu (p64, p64_cuda_tests, xz'd or not) and .dev/shared; the peer comes from
# .dev/peer/llama-bench-cuda-sm90.xz or an earlier call's /tmp/llama-bench.
# Env: STAGES (default "tests bench speed peer quality"), MODELS_LIST, EXTRA_OPTS (a third
# decode row per model with these --opt switches on top of tiles).
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=$PWD/.dev/shared
BIN=.dev/gpu; P64=$BIN/p64; M=/tmp/p64-models; L=$OUT/logs; DB=$OUT/lab.db
mkdir -p "$L" "$M"
TABLE=$OUT/table.txt; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
has() { [[ " ${STAGES:-tests bench speed peer quality} " == *" $1 "* ]]; }
for f in "$BIN"/*.xz; do [ -f "$f" ] && xz -d -f "$f"; done
if [ ! -x /tmp/llama-bench ] && [ -f .dev/peer/llama-bench-cuda-sm90.xz ]; then
  xz -dc .dev/peer/llama-bench-cuda-sm90.xz >/tmp/llama-bench && chmod +x /tmp/llama-bench
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv,noheader | sed 's/^/gpu: /' | tee -a "$TABLE"
"$P64" passport --backend cuda --json >"$L/passport.json" 2>"$L/passport.err"
CEIL=$(python3 -c "import json; print(round(json.load(open('$L/passport.json'))['measured']['read_gbs']))")
row "read ceiling (p64 passport --backend cuda): $CEIL GB/s"

MODELS_LIST=${MODELS_LIST:-"llama-3.2-3b:Q4_K_M llama-3.2-3b:Q8_0 smollm2-360m:Q8_0 smollm2-360m:Q4_K_M"}
for spec in $MODELS_LIST; do
  p=${spec%%:*}; q=${spec##*:}
  [ -f "$M/$p-$q.p64" ] || ( timeout 300 "$P64" synth --preset "$p" --quant "$q" -o "$M/$p-$q.gguf" -q &&
    timeout 300 "$P64" convert "$M/$p-$q.gguf" "$M/$p-$q.p64" --soa -q ) >"$L/models-$p-$q.log" 2>&1 &
done
wait
row "models ready at ${SECONDS} s"

if has tests; then
  timeout 240 "$BIN/p64_cuda_tests" >"$L/cuda_tests.log" 2>&1
  row "p64_cuda_tests: exit $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$L/cuda_tests.log" | tr '\n' ' ') (${SECONDS} s)"
  grep -E '^\[  FAILED  \]' "$L/cuda_tests.log" | head -8 | tee -a "$TABLE"
fi
if has bench; then
  timeout 200 "$P64" bench-gemv --preset llama-3.2-3b --iters 50 --repeats 5 >"$L/bench_gemv.txt" 2>&1
  cat "$L/bench_gemv.txt" >>"$TABLE"; cat "$L/bench_gemv.txt"
fi
speed() { timeout 150 "$P64" decode-proxy "$@" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --db "$DB" --json \
  2>>"$L/speed.err" | python3 -c "
import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; g=d['effective_gbs']['median']
print('%7.1f [%7.1f-%7.1f] %5.0f GB/s %4.1f%% of ceiling' % (m['median'], m['min'], m['max'], g, 100*g/$CEIL))"; }
if has speed; then
  for spec in $MODELS_LIST; do
    f="$M/${spec%%:*}-${spec##*:}.p64"
    row "$spec blocks tg128: $(speed "$f" --backend cuda)"
    row "$spec tiles  tg128: $(speed "$f" --backend cuda --opt gemv_layout=tiles)"
    [ -n "${EXTRA_OPTS:-}" ] && row "$spec tiles+$EXTRA_OPTS: $(speed "$f" --backend cuda --opt gemv_layout=tiles $EXTRA_OPTS)"
  done
  for layout in blocks tiles; do
    timeout 90 "$P64" timeline "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda --opt gemv_layout=$layout --tokens 16 \
      --no-store >"$L/timeline-3b-$layout.txt" 2>&1
    { echo "timeline 3B Q4_K_M gemv_layout=$layout:"; head -30 "$L/timeline-3b-$layout.txt"; } >>"$TABLE"
  done
fi
if has peer && [ -x /tmp/llama-bench ]; then
  for spec in $MODELS_LIST; do
    g="$M/${spec%%:*}-${spec##*:}.gguf"
    timeout 120 /tmp/llama-bench -m "$g" -ngl 99 -p 0 -n 128 -r 3 -fa 0,1 -o json >"$L/peer-$spec.json" 2>"$L/peer-$spec.err"
    row "$spec llama.cpp tg128: $(python3 -c "
import json; r=[t for t in json.load(open('$L/peer-$spec.json')) if t['n_gen']>0]
print(' / '.join('fa%d %.1f+-%.1f' % (t['flash_attn'], t['avg_ts'], t['stddev_ts']) for t in r))" 2>&1)"
  done
fi
if has quality; then
  ST=$M/stories260K.p64
  timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q
  SM=$M/smollm2-360m-Q8_0.p64
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$P64" decode-proxy "$M/smollm2-360m-Q4_K_M.p64" \
      --backend cuda --opt gemv_layout=tiles --tokens 2 --prompt-tokens 1 --runs 1 --warmup 0 --no-store >"$L/sanitizer_$tool.log" 2>&1
    row "compute-sanitizer $tool (smollm2 Q4_K_M, tiles): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/sanitizer_$tool.log" | tr -s ' ')"
  done
  quality() { local name=$1 limit=$2; shift 2
    timeout "$limit" "$P64" compare "$@" >"$L/compare_$name.log" 2>&1
    row "compare $name: exit $? $(grep -E 'PASS|FAIL|greedy' "$L/compare_$name.log" | tr -s ' ' | tr '\n' ' ') (${SECONDS} s)"; }
  quality stories-tiles 60 "$ST" --backend cuda --opt gemv_layout=tiles --tokens 128 --greedy 200
  quality smollm2-q4km-tiles 120 "$M/smollm2-360m-Q4_K_M.p64" --backend cuda --opt gemv_layout=tiles --tokens 128 --greedy 0
  left=$((${BUDGET:-575} - SECONDS))
  [ "$left" -gt 60 ] && quality 3b-q4km-tiles $left "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda --opt gemv_layout=tiles --tokens 128 --greedy 0
fi
tar -czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "==== table (${SECONDS} s)"; cat "$TABLE"
