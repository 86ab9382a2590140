#!/usr/bin/env bash
# Nsight Compute on one decode step of the 3B model (eager launches so every kernel is its own
# profile): duration, DRAM throughput, occupancy and the top warp stall per kernel, one line
# each. Run on the GPU machine with OUT set after the models exist (acceptance.sh models).
#   scripts/gpu/profile-step.sh MODEL.p64 [SWITCH=VALUE ...]
set -uo pipefail
cd "$(dirname "$0")/../.."
P64=${BIN:-.dev/gpu}/p64; f=$1; shift
o=(); for x in "$@"; do o+=(--opt "$x"); done
# one warm-up step runs ~300 kernels; skip it and profile the first layer of the next step
timeout 400 ncu --clock-control none --launch-skip 320 --launch-count 14 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --metrics smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
  "$P64" decode-proxy "$f" --backend cuda --tokens 3 --prompt-tokens 1 --runs 1 --warmup 0 --no-store --opt graphs=0 "${o[@]}" \
  >"$OUT/ncu.txt" 2>&1
echo "ncu exit $?"
python3 - "$OUT/ncu.txt" <<'PY'
import re, sys
name = None; rows = []; cur = {}
keys = {"Duration": "dur", "DRAM Throughput": "dram%", "Registers Per Thread": "regs", "Achieved Occupancy": "occ%",
        "Theoretical Occupancy": "theo%", "Grid Size": "grid", "Block Size": "block",
        "Warp Cycles Per Issued Instruction": "cpi", "Compute (SM) Throughput": "sm%"}
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\s{2}(\S.*?) \(\d+, \d+, \d+\)x\(\d+, \d+, \d+\)", line)
    if m:
        if cur: rows.append(cur)
        cur = {"kernel": re.sub(r"<.*", "", m.group(1)).split("::")[-1][:22], "tmpl": m.group(1)[:0]}
        continue
    for k, short in keys.items():
        m2 = re.match(r"\s+" + re.escape(k) + r"\s+(\S+)\s+([\d.,]+)", line)
        if m2: cur[short] = m2.group(2) + ("us" if m2.group(1) == "us" else ("ms" if m2.group(1) == "ms" else ""))
if cur: rows.append(cur)
cols = ["kernel", "dur", "dram%", "sm%", "regs", "theo%", "occ%", "grid", "block", "cpi"]
print(" ".join("%-22s" % c if c == "kernel" else "%8s" % c for c in cols))
for r in rows: print(" ".join(("%-22s" % r.get(c, "-")) if c == "kernel" else "%8s" % r.get(c, "-") for c in cols))
PY
grep -E "stalled|issue_active|inst_executed|warps_active|^  [a-z_]+.*\(" "$OUT/ncu.txt" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | head -${STALL_LINES:-150}
