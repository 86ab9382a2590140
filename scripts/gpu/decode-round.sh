#!/usr/bin/env bash
# An issue-22 round on the GPU machine: decode variants (switch sets) against the code defaults
# and against llama.cpp on the same GGUF files, every share against this call's own passport
# read ceiling. Correctness first (the full CUDA suite, compare vs the CPU's exact path,
# compute-sanitizer), then speed, bench-gemv, the timeline and A/Bs.
# Carry .dev/gpu (p64, p64_cuda_tests, xz'd or not) and .dev/shared; the peer comes from
# .dev/peer/llama-bench-cuda-sm90.xz or an earlier call's /tmp/llama-bench.
# Env: STAGES (default "tests bench speed peer quality"; also "ab", "ttft", "stream", "nvml", "depth"), MODELS_LIST, VARIANTS (below),
# BENCH_ARGS (extra bench-gemv options), AB (switches to A/B twice against the defaults, on AB_MODEL),
# QUALITY_OPTS (the switches compare and the sanitizer run with), SUMMARY_VARIANT. The last lines
# are the issue-22 table (scripts/gpu/summary-table.py).
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
  timeout 200 "$P64" bench-gemv --preset llama-3.2-3b --iters 50 --repeats 5 ${BENCH_ARGS:-} >"$L/bench_gemv.txt" 2>&1
  cat "$L/bench_gemv.txt" >>"$TABLE"; cat "$L/bench_gemv.txt"
fi
# the layer matrices launched one kernel each against one persistent kernel streaming them
if has stream; then
  timeout 120 "$P64" bench-stream --preset llama-3.2-3b --iters 10 --repeats 5 >"$L/bench_stream.txt" 2>&1
  cat "$L/bench_stream.txt" >>"$TABLE"; cat "$L/bench_stream.txt"
fi
# NVML on the real driver: one decode-proxy's human output (energy, clocks, throttling) and the
# GPU facts its stored run carries
if has nvml; then
  timeout 90 "$P64" decode-proxy "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda --tokens 128 --prompt-tokens 1 --runs 3 \
    --warmup 1 --db "$DB" >"$L/nvml.txt" 2>&1
  row "nvml decode-proxy: exit $? $(grep -iE 'energy|gpu|throttl|clock|power' "$L/nvml.txt" | head -6 | tr -s ' ' | tr '\n' ' ')"
  row "nvml passport: $(python3 -c "import json; print(json.load(open('$L/passport.json')).get('nvml', 'no nvml key'))" 2>&1)"
fi
speed() { timeout 150 "$P64" decode-proxy "$@" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --db "$DB" --json \
  2>>"$L/speed.err" | python3 -c "
import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; g=d['effective_gbs']['median']
print('%7.1f [%7.1f-%7.1f] %5.0f GB/s %4.1f%% of ceiling' % (m['median'], m['min'], m['max'], g, 100*g/$CEIL))"; }
# VARIANTS: NAME=SWITCH,SWITCH ... (NAME=- for the code defaults), each decoded on every model
VARIANTS=${VARIANTS:-"blocks=gemv_layout=blocks tiles=gemv_layout=tiles"}
opts_of() { opts=(); if [ "${1#*=}" != "-" ]; then IFS=',' read -ra sw <<<"${1#*=}"; for o in "${sw[@]}"; do opts+=(--opt "$o"); done; fi; }
if has speed; then
  for spec in $MODELS_LIST; do
    f="$M/${spec%%:*}-${spec##*:}.p64"
    for v in $VARIANTS; do opts_of "$v"; row "$spec ${v%%=*} tg128: $(speed "$f" --backend cuda "${opts[@]}")"; done
  done
  set -- $VARIANTS
  for v in "$1" "${@: -1}"; do  # prefill pp512 of the first and the last variant (3B Q4_K_M)
    opts_of "$v"
    r=$(timeout 120 "$P64" decode-proxy "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda "${opts[@]}" --tokens 8 \
      --prompt-tokens 512 --runs 3 --warmup 1 --db "$DB" --json 2>>"$L/speed.err" |
      python3 -c "import json,sys; m=json.load(sys.stdin)['prefill_tok_s']; print('%.0f [%.0f-%.0f]' % (m['median'], m['min'], m['max']))")
    row "llama-3.2-3b:Q4_K_M ${v%%=*} pp512: $r tok/s"
  done
  for v in "$1" "${@: -1}"; do  # the timeline of the first and the last variant
    opts_of "$v"
    timeout 90 "$P64" timeline "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda "${opts[@]}" --tokens 16 --no-store \
      >"$L/timeline-3b-${v%%=*}.txt" 2>&1
    { echo "timeline 3B Q4_K_M ${v%%=*}:"; grep -v '^timeline \[' "$L/timeline-3b-${v%%=*}.txt" | head -24; } >>"$TABLE"
  done
fi
# Decode at depth (a 4096-token prompt first) on the 3B Q4_K_M, per DEPTH_VARIANTS (default: the
# flash-decoding split sizes), and the timelines of the first and the last at that depth
if has depth; then
  f="$M/llama-3.2-3b-Q4_K_M.p64"
  for v in ${DEPTH_VARIANTS:-"chunk16=attn_chunk=16 chunk64=attn_chunk=64 chunk128=attn_chunk=128 chunk256=attn_chunk=256"}; do
    opts_of "$v"
    r=$(timeout 120 "$P64" decode-proxy "$f" --backend cuda "${opts[@]}" --tokens 128 --prompt-tokens ${DEPTH:-4096} \
      --runs 3 --warmup 1 --db "$DB" --json 2>>"$L/depth.err" | python3 -c "
import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; g=d['effective_gbs']['median']
print('%7.1f [%7.1f-%7.1f] %5.0f GB/s %4.1f%% of ceiling' % (m['median'], m['min'], m['max'], g, 100*g/$CEIL))")
    row "llama-3.2-3b:Q4_K_M depth ${DEPTH:-4096} ${v%%=*} tg128: $r"
  done
  set -- ${DEPTH_VARIANTS:-"chunk16=attn_chunk=16"}
  for v in "$1" "${@: -1}"; do  # the timeline of the first and the last variant at that depth
    opts_of "$v"
    timeout 90 "$P64" timeline "$f" --backend cuda "${opts[@]}" --tokens 16 --prompt-tokens ${DEPTH:-4096} --no-store \
      >"$L/timeline-depth-${v%%=*}.txt" 2>&1
    { echo "timeline 3B Q4_K_M depth ${DEPTH:-4096} ${v%%=*}:"; grep -v '^timeline \[' "$L/timeline-depth-${v%%=*}.txt" | head -24; } >>"$TABLE"
  done
fi
# Time to first token on the 3B Q4_K_M: short prompts batched (prefill_batch_min=1) or through
# the decode graph; and the first decode steps of a fresh load (warm-up 0) after a 512-token prompt.
if has ttft; then
  f="$M/llama-3.2-3b-Q4_K_M.p64"
  for n in 1 4 8 16 32; do
    for v in 1 ${TTFT_MIN:-33}; do
      r=$(timeout 60 "$P64" decode-proxy "$f" --backend cuda --opt prefill_batch_min=$v --tokens 4 --prompt-tokens $n \
        --runs 5 --warmup 1 --no-store --json 2>>"$L/ttft.err" |
        python3 -c "import json,sys; m=json.load(sys.stdin)['ttft_ms']; print('%.2f [%.2f-%.2f]' % (m['median'], m['min'], m['max']))")
      row "llama-3.2-3b:Q4_K_M ttft ms, prompt $n, prefill_batch_min=$v: $r"
    done
  done
  r=$(timeout 60 "$P64" decode-proxy "$f" --backend cuda --tokens 2 --prompt-tokens 512 --runs 1 --warmup 0 --no-store \
    --json 2>>"$L/ttft.err" | python3 -c "import json,sys; s=json.load(sys.stdin)['samples'][0]; print('%.1f tok/s (ttft %.1f ms)' % (s['decode_tok_s'], s['ttft_ms']))")
  row "llama-3.2-3b:Q4_K_M first 2 decode steps of a fresh load after 512 prompt tokens: $r"
fi
# AB="SWITCH=VALUE[+SWITCH=VALUE] ...": two interleaved A/Bs each on AB_MODEL (default the 3B Q4_K_M)
# after an AB_PROMPT-token prompt (default 1), the code defaults against the defaults plus those switches (the plan's promotion rule: two consecutive wins)
if has ab; then
  AB_MODEL=${AB_MODEL:-llama-3.2-3b:Q4_K_M}
  for sw in ${AB:-gemv_layout=tiles}; do
    for i in 1 2; do
      timeout 150 "$P64" ab "$M/${AB_MODEL%%:*}-${AB_MODEL##*:}.p64" --a "backend=cuda" --b "backend=cuda,opt.${sw//+/,opt.}" --runs 5 \
        --tokens 128 --prompt-tokens ${AB_PROMPT:-1} --quality-tokens 16 --db "$DB" >"$L/ab_${sw//[=+]/_}_$i.log" 2>&1
      row "ab#$i $AB_MODEL depth ${AB_PROMPT:-1} defaults + $sw: $(grep -E 'B/A' "$L/ab_${sw//[=+]/_}_$i.log" | tr -s ' ') -> $(grep -oE 'VERDICT: [a-z]+' "$L/ab_${sw//[=+]/_}_$i.log")"
    done
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
QOPTS=""; for o in ${QUALITY_OPTS:-}; do QOPTS="$QOPTS --opt $o"; done
if has quality; then
  ST=$M/stories260K.p64
  timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force
  SM=$M/smollm2-360m-Q8_0.p64
  for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$P64" decode-proxy "$M/smollm2-360m-Q4_K_M.p64" \
      --backend cuda $QOPTS --tokens 2 --prompt-tokens 1 --runs 1 --warmup 0 --no-store >"$L/sanitizer_$tool.log" 2>&1
    row "compute-sanitizer $tool (smollm2 Q4_K_M,$QOPTS): exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$L/sanitizer_$tool.log" | tr -s ' ')"
  done
  quality() { local name=$1 limit=$2; shift 2
    timeout "$limit" "$P64" compare "$@" >"$L/compare_$name.log" 2>&1
    row "compare $name: exit $? $(grep -E 'PASS|FAIL|greedy' "$L/compare_$name.log" | tr -s ' ' | tr '\n' ' ') (${SECONDS} s)"; }
  quality stories 60 "$ST" --backend cuda $QOPTS --tokens 128 --greedy 200
  quality smollm2-q4km 120 "$M/smollm2-360m-Q4_K_M.p64" --backend cuda $QOPTS --tokens 128 --greedy 0
  left=$((${BUDGET:-575} - SECONDS))
  [ "$left" -gt 60 ] && quality 3b-q4km $left "$M/llama-3.2-3b-Q4_K_M.p64" --backend cuda $QOPTS --tokens 128 --greedy 0
fi
# the issue-22 table: SUMMARY_VARIANT's decode rows (default: the first variant) against the peer
python3 scripts/gpu/summary-table.py "$TABLE" ${SUMMARY_VARIANT:-} >"$L/summary.txt" 2>&1; cat "$L/summary.txt" >>"$TABLE"
tar -czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "==== table (${SECONDS} s)"; cat "$TABLE"
