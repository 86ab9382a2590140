#!/usr/bin/env bash
# llama.cpp's decode at a depth, for the rows p64's `decode-proxy --prompt-tokens D` makes. This
# llama-bench snapshot has no -d: it times pp D and pg D,N (a D-token prompt, then N decoded
# tokens) separately, so decode at depth D is N / (t(pg D,N) - t(pp D)), from the mean times
# it reports (avg_ns). Prints one row per depth and flash-attention mode.
# Usage: peer-depth.sh LLAMA_BENCH GGUF DEPTHS(comma list) [N=128] [EXTRA llama-bench options...]
set -uo pipefail
BENCH=$1 GGUF=$2 DEPTHS=$3 N=${4:-128}
shift $(($# < 4 ? $# : 4))
pg=()
for d in ${DEPTHS//,/ }; do pg+=(-pg "$d,$N"); done
json=$(mktemp)
timeout "${PEER_TIMEOUT:-240}" "$BENCH" -m "$GGUF" -ngl 99 -p "$DEPTHS" -n 0 "${pg[@]}" -r 2 "$@" -o json >"$json" 2>"$json.err"
rc=$?
python3 - "$json" "$N" "$rc" <<'EOF'
import json, sys
path, n, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3]
try:
    rows = json.load(open(path))
except Exception as e:
    print(f"llama.cpp depth: no result (exit {rc}, {e})")
    sys.exit(0)
pp = {(r["n_prompt"], r["flash_attn"]): r["avg_ns"] for r in rows if r["n_gen"] == 0}
for r in rows:
    if r["n_gen"] == 0 or (r["n_prompt"], r["flash_attn"]) not in pp:
        continue
    dec_ns = r["avg_ns"] - pp[(r["n_prompt"], r["flash_attn"])]
    tok_s = n / (dec_ns / 1e9) if dec_ns > 0 else float("nan")
    print(f"llama.cpp depth {r['n_prompt']} fa{int(r['flash_attn'])} tg{n}: {tok_s:7.1f} tok/s "
          f"(pg {r['avg_ns']/1e6:.1f} ms - pp {pp[(r['n_prompt'], r['flash_attn'])]/1e6:.1f} ms)")
EOF
