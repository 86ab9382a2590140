#!/usr/bin/env bash
# A quick look at new decode switches on the GPU machine before any A/B: the unit tests that
# match FILTER, then for each model and each variant the decode speed (tg128 from a near-empty
# context, median of 3), on the first model the quality against the CPU backend (QUALITY=0: not)
# and a timeline of each of TIMELINES.
# Env: BACKEND (cuda or vulkan, default cuda), VARIANTS, TIMELINES (";"-separated lists of
# switch=value, "" = defaults), SPEED_MODELS, FILTER.
# Run from the repository root with OUT set and .dev/gpu, .dev/shared, .gl carried.
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
BACKEND=${BACKEND:-cuda}
[ "$BACKEND" = vulkan ] && source scripts/gpu/vulkan-loader.sh
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"; L="$OUT/logs"; mkdir -p "$L"
SPEED_MODELS=${SPEED_MODELS:-"llama-3.2-3b:Q4_K_M smollm2-360m:Q8_0"}
VARIANTS=${VARIANTS:-""}
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
opts() { local o=(); for x in $1; do o+=(--opt "$x"); done; echo "${o[@]}"; }

SPEED_MODELS="$SPEED_MODELS" OUT="$L" bash scripts/gpu/acceptance.sh models >/dev/null 2>&1
if [ -n "${FILTER:-}" ]; then
  timeout "${TEST_TIMEOUT:-200}" "$BIN/p64_${BACKEND}_tests" --gtest_filter="$FILTER" >"$L/tests.log" 2>&1
  row "$BACKEND tests [$FILTER]: exit $? $(grep -E '^\[  (PASSED|FAILED) ' "$L/tests.log" | tr '\n' ' ')"
  grep -E '^\[  FAILED  \]|Failure|error' "$L/tests.log" | head -12 >>"$TABLE"
fi
speed() { timeout 120 "$P64" decode-proxy "$@" --runs 3 --warmup 1 --db "$DB" --json 2>>"$L/speed.err" |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('decode %7.1f [%7.1f-%7.1f] %5.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))"; }
first=1
for m in $SPEED_MODELS; do
  f="$M/${m%%:*}-${m##*:}.p64"
  IFS=';' read -ra vs <<<"$VARIANTS"
  for v in "${vs[@]}"; do
    row "$(basename "$f" .p64) [${v:-defaults}]: $(speed "$f" --backend "$BACKEND" --tokens 128 --prompt-tokens 1 $(opts "$v"))"
    if [ $first = 1 ] && [ "${QUALITY:-1}" = 1 ]; then
      row "  quality: $(timeout 150 "$P64" compare "$f" --backend "$BACKEND" --tokens 32 --greedy 0 $(opts "$v") 2>&1 |
        grep -E "teacher" | tr -s ' ' | tr '\n' ' ')"
    fi
  done
  first=0
done
f="$M/$(echo "$SPEED_MODELS" | awk '{print $1}' | sed 's/:/-/').p64"
IFS=';' read -ra ts <<<"${TIMELINES:-}"
for v in "${ts[@]}"; do
  timeout 90 "$P64" timeline "$f" --backend "$BACKEND" --tokens 16 --db "$DB" $(opts "$v") >"$L/timeline.log" 2>&1
  row "timeline [${v:-defaults}]: $(grep -E 'wall|dispatches' "$L/timeline.log" | tr -s ' ' | tr '\n' ' ')"
  sed -n '/top op/,$p' "$L/timeline.log" | head -12 >>"$TABLE"
done
tar -czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "==== table"; cat "$TABLE"
