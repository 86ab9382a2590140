#!/usr/bin/env bash
# Merges lab stores a GPU call left (its $OUT/lab.db) into the one store the docs and screenshots
# use, docs/results/lab.db.xz (kept compressed: 6 MB as SQLite, 0.8 MB packed; `xz -dk` it to
# open it), and appends to docs/results/lab-store-runs.md, for each source file
# and run id (the ids the dated logs quote), the run's id in lab.db, matched by the run uid
# `p64 store merge` keys on. The sources are read from copies and can be deleted afterwards.
# Usage: scripts/results-store.sh <p64 executable> SOURCE.lab.db...   (needs the sqlite3 shell)
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/results-store.sh <p64 executable> SOURCE.lab.db..."
P64=${1:?$usage}
shift
[ $# -gt 0 ] || { echo "$usage" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "results-store.sh: the sqlite3 shell is missing (apt-get install sqlite3)" >&2; exit 1; }
PACKED=docs/results/lab.db.xz
INDEX=docs/results/lab-store-runs.md

WORK=$(mktemp -d "${TMPDIR:-/tmp}/p64-results-store.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DEST=$WORK/lab.db
if [ -f "$PACKED" ]; then xz -dc "$PACKED" > "$DEST"; fi
"$P64" store merge --db "$DEST" "$@"
if [ -f "$INDEX" ]; then
  cp "$INDEX" "$WORK/index.md"
else
  cat > "$WORK/index.md" <<'HEADER'
# Runs of docs/results/lab.db.xz by the store each came from

The GPU sessions' logs (docs/results/*.txt) quote run ids of the store each call wrote. Those
stores are merged into docs/results/lab.db.xz (scripts/results-store.sh); this table maps each
(source store, run id) to the run's id in lab.db. Unpack it (`xz -dk docs/results/lab.db.xz`), then open
lab.db with `p64lab` (File › Open store) or `p64 runs --db docs/results/lab.db`. Every store also holds the seed plan's imported history
(runs marked imported, the same in each): lab.db has them once, and they are left out here.

| source store | run there | run in lab.db | kind | backend | device | started |
|---|---|---|---|---|---|---|
HEADER
fi
for src in "$@"; do
  # A copy brought to this build's schema gives every run the uid the merge matched it by.
  cp "$src" "$WORK/copy.db"
  "$P64" runs --db "$WORK/copy.db" > /dev/null
  sqlite3 -separator '|' "$WORK/copy.db" \
    "ATTACH '$DEST' AS merged;
     SELECT r.id, m.id, r.kind, r.backend, r.device, r.started_at FROM runs r JOIN merged.runs m ON m.uid = r.uid
     WHERE r.imported = 0 ORDER BY r.id;" |
    while IFS='|' read -r there here kind backend device started; do
      echo "| $(basename "$src") | $there | $here | $kind | $backend | $device | $started |"
    done >> "$WORK/index.md"
  rm -f "$WORK/copy.db"
done
runs=$(sqlite3 "$DEST" 'SELECT COUNT(*) FROM runs')
xz -9 -c "$DEST" > "$WORK/lab.db.xz"
mv "$WORK/lab.db.xz" "$PACKED"
mv "$WORK/index.md" "$INDEX"
echo "results-store.sh: $PACKED holds $runs runs; index in $INDEX"
