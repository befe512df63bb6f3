#!/usr/bin/env python3
"""Independent totals of a dump CSV for memscope-export's tests: allocated bytes, allocations, and
the highest live bytes of any (process, device, pool), with blocks paired by allocation_id.
Usage: export_oracle.py DUMP.csv -> 'allocated N count N peak N'"""
import csv, re, sys

POOLS = {"PTA", "ATB", "MINDSPORE", "HAL", "HOST_PINNED", "HOST", "GE"}

def attrs(text):
    text = text.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    return dict(re.findall(r"(\w+):(.*?)(?=,\w+:|$)", text))

alloc = count = 0
blocks = {}   # (pid, allocation_id) -> (group, size)
deltas = {}   # group -> [((ts, id), bytes)]
with open(sys.argv[1], newline="") as fh:
    for r in csv.DictReader(fh):
        if r["Event"] not in ("MALLOC", "FREE") or r["Event Type"] not in POOLS:
            continue
        a = attrs(r["Attr"])
        size = int(a.get("size", "0"))
        pos = (int(r["Timestamp(ns)"]), int(r["ID"]))
        key = (r["Process Id"], a.get("allocation_id"))
        group = (r["Process Id"], r["Device Id"], r["Event Type"])
        if r["Event"] == "MALLOC":
            count += 1
            alloc += max(size, 0)
            blocks[key] = (group, size)
            if size > 0:
                deltas.setdefault(group, []).append((pos, size))
        elif key in blocks:
            g, s = blocks.pop(key)
            if s > 0:
                deltas.setdefault(g, []).append((pos, -s))
peak = 0
for g, ds in deltas.items():
    live = 0
    for _, b in sorted(ds):
        live += b
        peak = max(peak, live)
print(f"allocated {alloc} count {count} peak {peak}")
