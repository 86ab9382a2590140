#!/usr/bin/env bash
# Runs one libFuzzer target for a bounded time over its seeds and the corpus it grows.
# usage: run_fuzz_target.sh BINARY SECONDS MAX_LEN CORPUS_DIR SEED_DIR ARTIFACT_DIR
# Exits non-zero when the target finds a crash, a leak, a timeout or an out-of-memory; the
# input that did it is written to ARTIFACT_DIR (reproduce with: BINARY ARTIFACT_FILE).
set -euo pipefail
bin=$1 seconds=$2 max_len=$3 corpus=$4 seeds=$5 artifacts=$6
name=$(basename "$bin")
mkdir -p "$corpus" "$artifacts"
exec "$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=20 -rss_limit_mb=2560 \
  -print_final_stats=1 -artifact_prefix="$artifacts/$name-" "$corpus" "$seeds"
