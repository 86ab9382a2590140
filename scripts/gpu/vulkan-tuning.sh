#!/usr/bin/env bash
# The Vulkan decode GEMV's tuning run on the GPU machine (issue 7): Vulkan unit tests, quality of
# the wide kernel against the CPU, decode speed of the defaults and of each gemv_kernel=wide
# variant on the 3B Q4_K_M and smollm2 Q8_0 synth models, then two A/B runs of the fastest wide
# variant against the defaults on the 3B model (the plan's rule: two consecutive wins promote).
# Prints a table last. Bounded to BUDGET seconds in all (default 450): each step's timeout is cut
# to what is left, and steps that no longer fit are skipped and say so.
# Env: VARIANTS (";"-separated wide variants, space-separated switches each), BUDGET.
# Run from the repository root with OUT set and .dev/gpu, .dev/shared, .gl carried.
set -uo pipefail
cd "$(dirname "$0")/../.."

source scripts/gpu/vulkan-loader.sh

export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
OUT=${OUT:-$PWD/gpu-out}; mkdir -p "$OUT"
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"
BUDGET=${BUDGET:-450}
VARIANTS=${VARIANTS:-"gemv_kernel=wide;\
gemv_kernel=wide units_in_flight=1;\
gemv_kernel=wide units_in_flight=4;\
gemv_kernel=wide units_in_flight=8;\
gemv_kernel=wide rows_per_group=2;\
gemv_kernel=wide rows_per_group=2 units_in_flight=4;\
gemv_kernel=wide rows_per_group=4;\
gemv_kernel=wide rows_per_workgroup=16 rows_per_group=2;\
gemv_kernel=wide threads_per_row=16;\
gemv_kernel=wide threads_per_row=64"}
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }

# Seconds a step may take: its own limit, cut to what is left of the budget (0 = skip it).
limit() {
  local left=$((BUDGET - SECONDS - 10))
  if ((left < 15)); then echo 0; elif (($1 < left)); then echo "$1"; else echo "$left"; fi
}
opts() { local o=(); for x in $1; do o+=(--opt "$x"); done; echo "${o[@]}"; }
abcfg() { local c="backend=vulkan"; for x in $1; do c="$c,opt.$x"; done; echo "$c"; }
# only a few files come back from $OUT: the logs travel as one archive
pack_logs() {
  tar -czf /tmp/vulkan-tuning-logs.tgz -C "$OUT" --exclude=table.txt --exclude=lab.db . 2>/dev/null
  find "$OUT" -mindepth 1 -maxdepth 1 ! -name table.txt ! -name lab.db -exec rm -rf {} +
  mv /tmp/vulkan-tuning-logs.tgz "$OUT/logs.tgz"
}

row "device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null) | $("$P64" --version 2>&1 | head -1)"

t=$(limit 150)
if ((t > 0)); then
  timeout "$t" "$BIN/p64_vulkan_tests" >"$OUT/vulkan_tests.log" 2>&1
  row "unit tests vulkan: exit $? ($(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/vulkan_tests.log" | tr '\n' ' '))"
  grep -E '^\[  FAILED  \]' "$OUT/vulkan_tests.log" | head -20 | tee -a "$TABLE"
fi

# The synth models (made once per machine, by acceptance.sh's recipe: synth, then convert --soa).
t=$(limit 240)
((t > 0)) && SPEED_MODELS="smollm2-360m:Q8_0 llama-3.2-3b:Q4_K_M" MODELS="$M" OUT="$OUT/models" \
  timeout "$t" bash scripts/gpu/acceptance.sh models >"$OUT/models.log" 2>&1
S3=$M/llama-3.2-3b-Q4_K_M.p64; SM=$M/smollm2-360m-Q8_0.p64
for f in "$S3" "$SM"; do [ -f "$f" ] || row "missing model $f (see models.log)"; done

# decode tok/s of one configuration: "median [min-max] GB/s", or why not
speed() {
  local f=$1 v=$2 t
  t=$(limit 90)
  ((t > 0)) || { echo "skipped (budget)"; return; }
  timeout "$t" "$P64" decode-proxy "$f" --backend vulkan --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 \
    --db "$DB" --json $(opts "$v") 2>>"$OUT/speed.err" |
    python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('%7.1f [%7.1f-%7.1f] %5.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))" 2>/dev/null ||
    echo "failed (speed.err)"
}
IFS=';' read -ra variants <<<"$VARIANTS"
best=""; best_tps=0
for v in "" "${variants[@]}"; do
  v=$(echo $v)
  s3=$(speed "$S3" "$v"); sm=$(speed "$SM" "$v")
  row "speed [${v:-defaults}]: 3B-Q4_K_M $s3 | smollm2-Q8_0 $sm"
  tps=$(echo "$s3" | awk '{print ($1 + 0)}')
  if [ -n "$v" ] && awk -v a="$tps" -v b="$best_tps" 'BEGIN { exit !(a > b) }'; then best=$v; best_tps=$tps; fi
done
row "fastest wide variant on 3B: ${best:-none} ($best_tps tok/s)"

# Quality of the fastest wide variant against the CPU's exact float path.
if [ -n "$best" ]; then
  q() { grep -E "teacher|greedy" "$1" | tr -s ' ' | tr '\n' ' '; }
  t=$(limit 120)
  if ((t > 0)); then
    timeout "$t" "$P64" compare "$SM" --backend vulkan --tokens 64 --greedy 0 $(opts "$best") >"$OUT/compare_smollm2.log" 2>&1
    row "quality smollm2-Q8_0 [$best]: exit $? $(q "$OUT/compare_smollm2.log")"
  fi
  t=$(limit 150)
  if ((t > 0)); then
    timeout "$t" "$P64" compare "$S3" --backend vulkan --tokens 16 --greedy 0 $(opts "$best") >"$OUT/compare_3b.log" 2>&1
    row "quality 3B-Q4_K_M [$best]: exit $? $(q "$OUT/compare_3b.log")"
  fi
  for i in 1 2; do
    t=$(limit 120)
    ((t > 0)) || { row "ab#$i [$best] vs defaults: skipped (budget)"; continue; }
    timeout "$t" "$P64" ab "$S3" --a "backend=vulkan" --b "$(abcfg "$best")" --switch gemv_kernel --runs 3 --tokens 128 \
      --prompt-tokens 1 --quality-tokens 16 --db "$DB" >"$OUT/ab_$i.log" 2>&1
    row "ab#$i [$best] vs defaults: exit $? $(grep -E '^ *B/A' "$OUT/ab_$i.log" | tr -s ' ') -> $(grep -oE 'VERDICT: [a-z]+' "$OUT/ab_$i.log" | cut -d' ' -f2)"
  done
fi
row "wall: ${SECONDS} s"
pack_logs
echo "==== table"; cat "$TABLE"
