#!/usr/bin/env bash
# The Windows p64.exe under wine, on a real model: convert stories260K (llama2.c) to .p64,
# verify it, generate greedily and compare with llama2.c's own text (the one the Linux build's
# GenerateCli tests compare with), store a decode-proxy run in a fresh SQLite store and read it
# back, and print the host passport (collect_host_facts() on Windows).
# Usage: cli_under_wine.sh <p64.exe> <shared dir (models/)>
set -euo pipefail
P64=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
MODELS=$(cd "$2/models" && pwd)
WINE=${WINE:-$(command -v wine || echo /usr/lib/wine/wine64)}
export WINEDEBUG=${WINEDEBUG:--all}
WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/p64-wine-cli.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }
p64() { "$WINE" "$P64" "$@"; }
# A Windows program's text output ends its lines with CR LF; the text is what is compared.
unix_text() { tr -d '\r'; }
cd "$WORK"  # wine maps this folder to Z:, so relative paths need no translation

step "p64 --version"
p64 --version | unix_text | tee version.txt
grep -q '^backends: cpu' version.txt || fail "p64 --version lists no CPU backend"

step "p64 convert stories260K.bin (+ tok512.bin) -> stories.p64"
cp "$MODELS/stories260K.bin" "$MODELS/tok512.bin" .
p64 convert -q stories260K.bin stories.p64 --tokenizer tok512.bin
[ -s stories.p64 ] || fail "convert wrote no stories.p64"

step "p64 verify stories.p64"
p64 verify stories.p64 | unix_text | tail -3

step "p64 generate --temp 0 --tokens 256: llama2.c's greedy text"
p64 generate --model stories.p64 --backend cpu --threads 2 --temp 0 --tokens 256 >generated.raw 2>generate.err ||
  { cat generate.err >&2; fail "generate exited with $?"; }
unix_text <generated.raw >generated.txt
# The reference ends with run.c's own newline; p64 ends its text with one newline as well.
cmp generated.txt "$MODELS/expected/stories260K_greedy_noprompt_n256.txt" ||
  { diff <(head -c 400 generated.txt) <(head -c 400 "$MODELS/expected/stories260K_greedy_noprompt_n256.txt") >&2 || true
    fail "the greedy text differs from llama2.c's"; }
echo "identical to expected/stories260K_greedy_noprompt_n256.txt ($(wc -c <generated.txt) bytes)"

step "p64 decode-proxy --db lab.db (a run stored through SQLite under wine)"
p64 decode-proxy stories.p64 --backend cpu --tokens 8 --prompt-tokens 8 --runs 2 --warmup 0 --db lab.db |
  unix_text | tee proxy.txt
grep -q "^  backend cpu " proxy.txt || fail "decode-proxy did not run on the CPU backend"
p64 runs --db lab.db | unix_text | tee runs.txt
run_id=$(sed -n 's/^  stored as run \([0-9]*\) in lab.db$/\1/p' proxy.txt)
[ -n "$run_id" ] || fail "decode-proxy did not say which run it stored"
grep -Eq "^ +$run_id +decode-proxy +ok +cpu " runs.txt || fail "p64 runs does not list run $run_id (cpu, ok)"

step "p64 passport (host facts from Windows' own interfaces)"
p64 passport --backend cpu | unix_text | tee passport.txt
grep -q "Windows [0-9]*\.[0-9]* build [0-9]" passport.txt || fail "the passport names no Windows version"
echo "PASS"
