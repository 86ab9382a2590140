#!/usr/bin/env python3
"""The issue-22 table from a decode-round.sh table: per model, llama.cpp tg128 (best of fa 0/1),
p64 tg128 (one variant's row), their ratio and p64's share of the read roofline measured in the
same call. Usage: summary-table.py TABLE.txt [VARIANT]  (VARIANT: the decode row's name; default
the first one found)."""
import re
import sys

lines = open(sys.argv[1]).read().splitlines()
variant = sys.argv[2] if len(sys.argv) > 2 else None
ceiling = next((float(m.group(1)) for l in lines if (m := re.search(r"read ceiling .*: (\d+) GB/s", l))), None)
ours, peer, order = {}, {}, []
for l in lines:
    m = re.match(r"(\S+:\S+) (\S+) tg128: +([\d.]+) \[.*\] +(\d+) GB/s +([\d.]+)% of ceiling", l)
    if m and (variant is None or m.group(2) == variant):
        variant = variant or m.group(2)
        if m.group(1) not in ours:
            order.append(m.group(1))
            ours[m.group(1)] = (float(m.group(3)), float(m.group(5)))
    m = re.match(r"(\S+:\S+) llama\.cpp tg128: (.*)", l)
    if m:
        vals = [float(v) for v in re.findall(r"fa\d ([\d.]+)\+-", m.group(2))]
        if vals:
            peer[m.group(1)] = max(vals)
print(f"p64 variant '{variant}', read ceiling {ceiling:.0f} GB/s (p64 passport, this call)")
print("| model | llama.cpp tg128 (best of fa 0/1) | p64 tg128 | ratio | p64 share of the read roofline |")
print("|---|---|---|---|---|")
for model in order:
    tps, share = ours[model]
    p = peer.get(model)
    ratio = f"{tps / p:.2f}x" if p else "-"
    print(f"| {model} | {p if p else '-'} | {tps:.1f} | {ratio} | {share:.1f}% |")
