#!/usr/bin/env bash
# The decode switches' promotion run on the GPU machine (BACKEND=cuda, the default, or vulkan): unit tests, a speed sweep, then for
# each candidate in order two A/B runs against the configuration promoted so far (the plan's
# rule: two consecutive wins make a default), and the final numbers of the promoted set on every
# model: quality against the CPU, decode speed, pp512, a timeline. Prints a table last.
# Env: CANDIDATES (space-separated switch=value, in order; a+b joins switches into one candidate;
# "best": the sweep's fastest variant), SWEEP (";"-separated variants timed
# first, "" = defaults), FINAL=0 stops after the A/B runs.
# Run from the repository root with OUT set and .dev/gpu, .dev/shared, .gl carried.
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
BACKEND=${BACKEND:-cuda}
[ "$BACKEND" = vulkan ] && source scripts/gpu/vulkan-loader.sh
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"
CANDIDATES=${CANDIDATES-"pdl=1 attn_chunk=16 gemv_regs=cap l2_prefetch=1"}  # set but empty: none
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
# only a few files come back from $OUT: the logs travel as one archive
pack_logs() {
  tar -czf /tmp/logs.tgz -C "$OUT" --exclude=table.txt --exclude=lab.db . 2>/dev/null
  find "$OUT" -mindepth 1 -maxdepth 1 ! -name table.txt ! -name lab.db -exec rm -rf {} +
  mv /tmp/logs.tgz "$OUT/logs.tgz"
}
opts() { local o=(); for x in $1; do o+=(--opt "$x"); done; echo "${o[@]}"; }
abcfg() { local c="backend=$BACKEND"; for x in $1; do c="$c,opt.$x"; done; echo "$c"; }

SPEED_MODELS="smollm2-360m:Q8_0 llama-3.2-3b:Q4_K_M" TEST_TIMEOUT=200 BACKENDS=$BACKEND bash scripts/gpu/acceptance.sh models tests \
  >"$OUT/acceptance.log" 2>&1
grep -E "unit tests|FAILED|last started" "$OUT/acceptance.log" | awk '!seen[$0]++' | tee -a "$TABLE"  # the log ends with its own table
S3=$M/llama-3.2-3b-Q4_K_M.p64; SM=$M/smollm2-360m-Q8_0.p64; ST=$M/stories260K.p64
timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force

speed() { timeout 120 "$P64" decode-proxy "$@" --runs 3 --warmup 1 --db "$DB" --json 2>>"$OUT/speed.err" |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; p=d['prefill_tok_s']; print('decode %7.1f [%7.1f-%7.1f] %5.0f GB/s  prefill %8.1f' % (m['median'], m['min'], m['max'], d['effective_gbs']['median'], p['median']))"; }
IFS=';' read -ra sweep <<<"${SWEEP:-;l2_prefetch=1;gemv_rows=1}"
best=""; best_tps=0
for v in "${sweep[@]}"; do
  r=$(speed "$S3" --backend "$BACKEND" --tokens 128 --prompt-tokens 1 $(opts "$v"))
  row "sweep 3B-Q4_K_M [${v:-default}]: $r"
  tps=$(echo "$r" | awk '{print $2}')
  if [ -n "$tps" ] && awk "BEGIN{exit !($tps > $best_tps)}"; then best="$v"; best_tps=$tps; fi
done
# CANDIDATES=best: the fastest sweep variant (its switches joined into one candidate), if not the defaults
if [ "$CANDIDATES" = best ]; then
  CANDIDATES=$(echo $best | tr ' ' '+')
  row "best sweep variant: ${best:-defaults} ($best_tps tok/s)"
fi

base=""
for sw in $CANDIDATES; do
  v=()
  # a joined candidate (a=1+b=2) differs in several switches: its verdict is stored as "a+b"
  named=(); [[ $sw == *+* ]] && named=(--switch "$(echo "$sw" | tr '+' '\n' | cut -d= -f1 | paste -sd+)")
  for i in 1 2; do
    timeout 150 "$P64" ab "$S3" --a "$(abcfg "$base")" --b "$(abcfg "$base ${sw//+/ }")" --runs 3 --tokens 128 --prompt-tokens 1 \
      --quality-tokens 16 --db "$DB" "${named[@]}" >"$OUT/ab_${sw/=/_}_$i.log" 2>&1
    v+=("$(grep -oE 'VERDICT: [a-z]+' "$OUT/ab_${sw/=/_}_$i.log" | cut -d' ' -f2)")
    row "ab#$i [${base:-default}] + $sw: $(grep -E 'B/A' "$OUT/ab_${sw/=/_}_$i.log" | tr -s ' ') -> ${v[-1]}"
  done
  [ "${v[1]}" = promoted ] && base="$base ${sw//+/ }"
done
base=$(echo $base)
row "promoted set: ${base:-none}"

if [ "${FINAL:-1}" = 0 ]; then
  pack_logs; echo "==== table"; cat "$TABLE"; exit 0
fi
q() { timeout "$1" "$P64" compare "${@:2}" 2>&1 | grep -E "teacher|greedy:|greedy," | tr -s ' ' | tr '\n' ' '; }
row "quality stories260K [$base]: $(q 90 "$ST" --backend "$BACKEND" --tokens 128 --greedy 200 $(opts "$base"))"
row "quality smollm2 [$base]: $(q 120 "$SM" --backend "$BACKEND" --tokens 128 --greedy 0 $(opts "$base"))"
row "quality 3B [$base]: $(q 150 "$S3" --backend "$BACKEND" --tokens 32 --greedy 0 $(opts "$base"))"
for f in "$S3" "$SM"; do
  row "final $(basename "$f" .p64) [$base]: $(speed "$f" --backend "$BACKEND" --tokens 128 --prompt-tokens 1 $(opts "$base"))"
done
row "pp512 3B [$base]: $(speed "$S3" --backend "$BACKEND" --tokens 1 --prompt-tokens 512 $(opts "$base"))"
row "4k context 3B [$base]: $(speed "$S3" --backend "$BACKEND" --tokens 128 --prompt-tokens 4000 $(opts "$base"))"
timeout 90 "$P64" timeline "$S3" --backend "$BACKEND" --tokens 16 --trace "$OUT/trace_${BACKEND}_3b.json" --db "$DB" $(opts "$base") \
  >"$OUT/timeline_${BACKEND}.log" 2>&1
sed -n '/group/,$p' "$OUT/timeline_${BACKEND}.log" | head -18 >>"$TABLE"
if [ "${WITH_Q8:-1}" = 1 ]; then
  S8=$(SPEED_MODELS="llama-3.2-3b:Q8_0" bash scripts/gpu/acceptance.sh models >/dev/null 2>&1; echo "$M/llama-3.2-3b-Q8_0.p64")
  for v in "" "$base"; do row "final llama-3.2-3b-Q8_0 [${v:-default}]: $(speed "$S8" --backend "$BACKEND" --tokens 128 --prompt-tokens 1 $(opts "$v"))"; done
fi
pack_logs
echo "==== table"; cat "$TABLE"
