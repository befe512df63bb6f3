#!/usr/bin/env python3
"""Compare the dump CSV memscope-convert wrote from an Nsight-style database (make_nsys.py) with
the JSON of what the script inserted: every figure, and every event when the JSON lists them.

  check_nsys.py OUT.csv EXPECTED.json

Exits 0 when all agree, else 1 naming each difference. Also checks what holds of any read: IDs
1, 2, 3, ... and timestamps that never go back.
"""
import csv
import json
import sys


def attrs(text):
    """{k:v,k:v} as a dict (our values hold no comma)."""
    if not text:
        return {}
    return dict(kv.split(":", 1) for kv in text[1:-1].split(","))


def figures(rows):
    f = {"events": len(rows), "count": {}, "bytes": {}, "kind_labels": {}, "marks": 0,
         "range_starts": 0, "range_ends": 0, "step_starts": 0, "aten_starts": 0,
         "aten_ends": 0, "pids": set(), "devices": set(), "first_ts": None, "last_ts": None}
    for r in rows:
        ts = int(r["Timestamp(ns)"])
        f["first_ts"] = ts if f["first_ts"] is None else min(f["first_ts"], ts)
        f["last_ts"] = ts if f["last_ts"] is None else max(f["last_ts"], ts)
        f["pids"].add(int(r["Process Id"]))
        ev, sub = r["Event"], r["Event Type"]
        if ev in ("MALLOC", "FREE"):
            a = attrs(r["Attr"])
            key = ev + " " + sub
            f["count"][key] = f["count"].get(key, 0) + 1
            f["bytes"][key] = f["bytes"].get(key, 0) + int(a["size"])
            f["kind_labels"][a["kind"]] = f["kind_labels"].get(a["kind"], 0) + 1
            f["devices"].add(int(r["Device Id"]))
        elif (ev, sub) == ("MSTX", "Mark"):
            f["marks"] += 1
        elif (ev, sub) == ("MSTX", "Range_start"):
            f["range_starts"] += 1
            f["step_starts"] += r["Name"] == "step start"
        elif (ev, sub) == ("MSTX", "Range_end"):
            f["range_ends"] += 1
        elif (ev, sub) == ("OP_LAUNCH", "ATEN_START"):
            f["aten_starts"] += 1
        elif (ev, sub) == ("OP_LAUNCH", "ATEN_END"):
            f["aten_ends"] += 1
    f["pids"], f["devices"] = sorted(f["pids"]), sorted(f["devices"])
    return f


def main():
    out, want_path = sys.argv[1], sys.argv[2]
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    with open(want_path) as f:
        want = json.load(f)
    errors = []
    got = figures(rows)
    for key, value in want.items():
        if key in ("list", "leak", "bad"):
            continue
        if got.get(key) != value:
            errors.append("%s: read %r, inserted %r" % (key, got.get(key), value))
    last = 0
    for n, r in enumerate(rows):
        if r["ID"] != str(n + 1):
            errors.append("row %d has ID %s" % (n + 1, r["ID"]))
            break
        if int(r["Timestamp(ns)"]) < last:
            errors.append("row %d goes back in time" % (n + 1))
            break
        last = int(r["Timestamp(ns)"])
    cols = ["ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread Id",
            "Device Id", "Ptr", "Attr"]
    for n, (r, w) in enumerate(zip(rows, want.get("list", []))):
        line = [r[c] for c in cols]
        if line != w:
            errors.append("event %d: read %s, inserted %s" % (n + 1, line, w))
            break
    for e in errors:
        print("check_nsys: %s: %s" % (want_path, e))
    if not errors:
        print("check_nsys: %s: %d events agree" % (want_path, len(rows)))
    sys.exit(1 if errors else 0)


if __name__ == "__main__":
    main()
