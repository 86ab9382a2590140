#!/usr/bin/env bash
# Short check of a build whose CUDA defaults changed: the CUDA quality and switch tests, decode and
# pp512 with the defaults (stored), the rejected fuse_norm A/B for the history, the prefill
# opt-ins' pp512, decode at 4k context, and a timeline (the 2026-12-03 run also A/B'd the since
# removed attn_fused: docs/results/h200-2026-12-03.txt). Only table.txt, lab.db and logs.tgz are left in $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export P64_SHARED_DIR=${P64_SHARED_DIR:-$PWD/.dev/shared}
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=${MODELS:-/tmp/p64-models}; DB="$OUT/lab.db"; L="$OUT/logs"; mkdir -p "$L"
TABLE="$OUT/table.txt"; : >"$TABLE"
row() { echo "$*" | tee -a "$TABLE"; }
SPEED_MODELS="llama-3.2-3b:Q4_K_M" OUT="$L" bash scripts/gpu/acceptance.sh models >/dev/null 2>&1
S3=$M/llama-3.2-3b-Q4_K_M.p64
timeout 120 "$BIN/p64_cuda_tests" --gtest_filter='CudaQuality*:CudaStepSwitches*:CudaBackend*:CudaPrefill*' >"$L/tests.log" 2>&1
row "cuda tests: exit $? $(grep -E '^\[  (PASSED|FAILED) ' "$L/tests.log" | tr '\n' ' ')"
speed() { timeout 120 "$P64" decode-proxy "$@" --runs 3 --warmup 1 --db "$DB" --json 2>>"$L/speed.err" |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; p=d['prefill_tok_s']; print('decode %7.1f [%7.1f-%7.1f] %5.0f GB/s  prefill %8.1f [%8.1f-%8.1f]' % (m['median'], m['min'], m['max'], d['effective_gbs']['median'], p['median'], p['min'], p['max']))"; }
row "3B-Q4_K_M defaults tg128: $(speed "$S3" --backend cuda --tokens 128 --prompt-tokens 1)"
for v in "" "--opt prefill_splitk=1" "--opt prefill_attn_group=4"; do
  row "3B-Q4_K_M pp512 ${v:-defaults}: $(speed "$S3" --backend cuda --tokens 1 --prompt-tokens 512 $v)"
done
timeout 150 "$P64" ab "$S3" --a backend=cuda --b backend=cuda,opt.fuse_norm=1 --runs 3 --tokens 128 --prompt-tokens 1 \
  --quality-tokens 16 --db "$DB" >"$L/ab_fuse_norm.log" 2>&1
row "ab defaults + fuse_norm=1: $(grep -E 'B/A|VERDICT' "$L/ab_fuse_norm.log" | tr -s ' ' | tr '\n' ' ')"
row "3B-Q4_K_M defaults at 4k context: $(speed "$S3" --backend cuda --tokens 128 --prompt-tokens 4000)"
timeout 90 "$P64" timeline "$S3" --backend cuda --tokens 16 --trace "$L/trace_cuda_3b.json" --db "$DB" >"$L/timeline.log" 2>&1
sed -n '/group/,$p' "$L/timeline.log" | head -20 >>"$TABLE"
tar -czf "$OUT/logs.tgz" -C "$L" . && rm -rf "$L"
echo "==== table"; cat "$TABLE"
