#!/usr/bin/env bash
# Issue 23's acceptance check: no hostile model file of at most 2 MB makes any command use more
# than 1 GB or run longer than 10 s. Writes the cases of tests/support/hostile_models.h and runs
# inspect, convert, generate and tokenize on each, and verify and decode-proxy (cpu) on the .p64
# (the input, or what convert wrote), each under `ulimit -v 4000000`. Prints one row per run:
# exit status, wall time, peak resident memory (GNU time's maximum RSS over the process tree),
# what the file added to both over the same command on the control (a plain tiny model), and
# the outcome.
#
# The limits apply to what a file adds: decode-proxy first measures the host's read bandwidth
# over a buffer of 4x the last-level cache whatever the model (2 GB and several seconds on a
# large-cache server), which no file changes. Each run is killed 10 s after the control's time
# for the same command. Exits 1 when any run added more than 1 GB or 10 s, was killed, ended
# by a signal or ran out of memory.
#
# usage: scripts/hostile-limits.sh [BUILD_DIR]   (default build-cpu; needs p64 and p64_hostile_models built)
#        P64=other/p64 scripts/hostile-limits.sh  (the same cases against another binary)
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-cpu}
P64=${P64:-$BUILD/app/cli/p64}
GEN=${GEN:-$BUILD/tests/p64_hostile_models}
TIME=/usr/bin/time
LIMIT_KB=1048576   # 1 GB of resident memory
LIMIT_S=10
for tool in "$P64" "$GEN" "$TIME"; do
  [[ -x $tool ]] || { echo "hostile-limits.sh: $tool is missing (cmake --build $BUILD --target p64 p64_hostile_models)" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/p64-hostile-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
"$GEN" "$WORK/cases" > "$WORK/cases.tsv" || exit 2

declare -A base_wall base_kb
failed=0
printf '%-36s %-12s %4s %7s %8s %7s %8s  %s\n' case command rc wall_s peak_MB +wall_s +MB outcome
# run NAME COMMAND REFUSAL ARGS...: one command under the caps; prints its row, counts a failure.
run() {
  local name=$1 command=$2 refusal=$3
  shift 3
  local err="$WORK/err" stats="$WORK/stats" control=0 kill_after=60
  [[ $name == control-* ]] && control=1
  if (( !control )); then kill_after=$(awk -v w="${base_wall[$command]}" -v l="$LIMIT_S" 'BEGIN { printf "%d", w + l + 1 }'); fi
  ( ulimit -v 4000000; "$TIME" -f '%e %M' -o "$stats" timeout -k 2 "$kill_after" "$P64" "$@" > "$WORK/out" 2> "$err" )
  local rc=$?
  local wall rss
  read -r wall rss < <(tail -n 1 "$stats")
  if (( control )); then base_wall[$command]=$wall base_kb[$command]=$rss; fi
  local add_s add_kb
  add_s=$(awk -v w="$wall" -v b="${base_wall[$command]}" 'BEGIN { printf "%.2f", w - b }')
  add_kb=$((rss - ${base_kb[$command]}))
  local outcome
  if (( rc == 124 || rc == 137 )); then outcome="KILLED after ${kill_after} s"
  elif (( rc > 128 )); then outcome="SIGNAL $((rc - 128))"
  elif grep -q "bad_alloc\|out of memory" "$err"; then outcome="OUT OF MEMORY"
  elif (( rc == 0 )); then outcome="ok"
  elif [[ -n $refusal ]] && grep -qF -- "$refusal" "$err" "$WORK/out"; then outcome="refused: $refusal"
  else outcome="error: $(cat "$err" "$WORK/out" | grep -m1 . | sed "s|$WORK/cases/||g; s|$WORK/||g")"
  fi
  local bad=""
  if [[ $outcome == KILLED* || $outcome == SIGNAL* || $outcome == OUT* ]] || (( add_kb > LIMIT_KB )) ||
     awk -v a="$add_s" -v l="$LIMIT_S" 'BEGIN { exit !(a > l) }'; then
    bad="  <-- FAIL"
    failed=$((failed + 1))
  fi
  printf '%-36s %-12s %4d %7.2f %8.1f %7.2f %8.1f  %s%s\n' "$name" "$command" "$rc" "$wall" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')" \
    "$add_s" "$(awk -v k="$add_kb" 'BEGIN { print k / 1024 }')" "${outcome:0:110}" "$bad"
}

while IFS=$'\t' read -r name path tokenizer prompt refusal; do
  [[ $tokenizer == - ]] && tokenizer=""
  [[ $refusal == - ]] && refusal=""
  tok=()
  [[ -n $tokenizer ]] && tok=(--tokenizer "$tokenizer")
  out="$WORK/$name.p64"
  run "$name" inspect "$refusal" inspect "$path" "${tok[@]}"
  run "$name" convert "$refusal" convert -q "$path" "$out" "${tok[@]}"
  run "$name" generate "$refusal" generate --model "$path" "${tok[@]}" --backend cpu --threads 1 --temp 0 --tokens 4 --prompt "$prompt"
  run "$name" tokenize "$refusal" tokenize --model "${tokenizer:-$path}" "$prompt"
  # verify and decode-proxy read .p64 files: the input when it is one, else what convert wrote.
  p64=$path
  [[ $path == *.p64 ]] || p64=$out
  if [[ -f $p64 ]]; then
    run "$name" verify "$refusal" verify -q "$p64"
    run "$name" decode-proxy "$refusal" decode-proxy "$p64" --backend cpu --threads 1 --tokens 4 --prompt-tokens 1 \
      --runs 1 --warmup 0 --no-store
  fi
  rm -f "$out"
done < "$WORK/cases.tsv"

if (( failed > 0 )); then
  echo "hostile-limits.sh: $failed run(s) added more than 1 GB or $LIMIT_S s, or were killed, ended by a signal or ran out of memory" >&2
  exit 1
fi
echo "hostile-limits.sh: every run stayed within 1 GB and $LIMIT_S s of the control"
