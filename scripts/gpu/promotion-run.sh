#!/usr/bin/env bash
# The 2026-12-02 H200 run: unit tests, quality of the defaults against the CPU reference, decode
# speed of the candidates, and the A/B runs (stored with their verdicts) that decide promotions.
# Run on the GPU machine from the repository root with OUT set (see scripts/gpu/stage.sh).
set -uo pipefail
cd "$(dirname "$0")/../.."
export SPEED_MODELS="smollm2-360m:Q8_0 llama-3.2-3b:Q4_K_M"
BIN=${BIN:-.dev/gpu}; P64="$BIN/p64"; M=/tmp/p64-models; DB="$OUT/lab.db"
TEST_TIMEOUT=90 bash scripts/gpu/acceptance.sh models tests >"$OUT/acceptance.log" 2>&1
grep -E "unit tests|FAILED|last started" "$OUT/acceptance.log"
S3=$M/llama-3.2-3b-Q4_K_M.p64; SM=$M/smollm2-360m-Q8_0.p64; ST=$M/stories260K.p64
timeout 60 "$P64" convert "$P64_SHARED_DIR/models/stories260K.bin" "$ST" --tokenizer "$P64_SHARED_DIR/models/tok512.bin" -q --force
q() { timeout "$1" "$P64" compare "${@:2}" | grep -E "teacher|greedy:|greedy," | tr -s ' ' | tr '\n' ' '; echo; }
echo "quality cuda stories: $(q 60 "$ST" --backend cuda --tokens 128 --greedy 200)"
echo "quality cuda smollm2: $(q 90 "$SM" --backend cuda --tokens 128 --greedy 0)"
echo "quality cuda 3B:      $(q 120 "$S3" --backend cuda --tokens 32 --greedy 0)"
speed() { timeout 90 "$P64" decode-proxy "$@" --tokens 128 --prompt-tokens 1 --runs 3 --warmup 1 --db "$DB" --json 2>/dev/null |
  python3 -c "import json,sys; d=json.load(sys.stdin); m=d['decode_tok_s']; print('%7.1f tok/s [%7.1f-%7.1f] %5.0f GB/s' % (m['median'], m['min'], m['max'], d['effective_gbs']['median']))"; }
for f in "$S3" "$SM"; do
  for v in "cuda" "cuda --opt gemv_rows=1" "cuda --opt act_quant=int8" "cuda --opt act_quant=int8 --opt gemv_rows=1" \
           "vulkan" "vulkan --opt rows_per_workgroup=8"; do
    echo "speed $(basename "$f" .p64) $v: $(speed "$f" --backend $v)"
  done
done
ab() { timeout 150 "$P64" ab "$1" --a "$2" --b "$3" --runs 3 --tokens 128 --prompt-tokens 1 --quality-tokens 16 --db "$DB" 2>/dev/null |
  grep -iE "ratio|verdict|quality" | tr -s ' ' | tr '\n' ' '; echo; }
for i in 1 2; do
  echo "ab#$i cuda gemv_rows=1: $(ab "$S3" backend=cuda backend=cuda,opt.gemv_rows=1)"
  echo "ab#$i vulkan rows_per_workgroup=8: $(ab "$S3" backend=vulkan backend=vulkan,opt.rows_per_workgroup=8)"
done
echo "ab cuda act_quant=int8: $(ab "$S3" backend=cuda backend=cuda,opt.act_quant=int8)"
timeout 60 "$P64" timeline "$S3" --backend cuda --tokens 16 --trace "$OUT/trace_cuda_3b.json" --db "$DB" >"$OUT/timeline_cuda.log" 2>&1
sed -n '/group/,$p' "$OUT/timeline_cuda.log" | head -24
tar -czf "$OUT/logs.tgz" -C "$OUT" --exclude=logs.tgz . 2>/dev/null
