#!/usr/bin/env python3
"""Check a Chrome trace event JSON file as Perfetto and chrome://tracing read it: an object with
a traceEvents array; every event has a known ph, a pid, and (but metadata) a finite ts >= 0;
counters have numeric args; B/E slices nest per (pid, tid) in time order.
Usage: check_chrome_trace.py FILE -> 'ok N events' or 'FAIL: ...', exit 0/1."""
import json, math, sys

def check(path):
    d = json.load(open(path))
    ev = d.get("traceEvents") if isinstance(d, dict) else None
    if not isinstance(ev, list):
        return ["no traceEvents array"], 0
    errs, stacks = [], {}
    for i, e in enumerate(ev):
        ph = e.get("ph")
        if ph not in ("M", "C", "B", "E", "i", "X"):
            errs.append(f"event {i}: ph {ph!r}")
            continue
        if not isinstance(e.get("pid"), int):
            errs.append(f"event {i}: pid")
        if ph == "M":
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or not math.isfinite(ts) or ts < 0:
            errs.append(f"event {i}: ts {ts!r}")
        if ph == "C" and not (isinstance(e.get("args"), dict) and e["args"] and
                              all(isinstance(v, (int, float)) for v in e["args"].values())):
            errs.append(f"event {i}: counter args")
        if ph in ("B", "i", "C") and not isinstance(e.get("name"), str):
            errs.append(f"event {i}: name")
    # slices: in time order (stable), every E closes an open B of its thread
    for e in sorted((e for e in ev if e.get("ph") in ("B", "E")), key=lambda e: e["ts"]):
        k = (e["pid"], e.get("tid"))
        if e["ph"] == "B":
            stacks[k] = stacks.get(k, 0) + 1
        elif stacks.get(k, 0) == 0:
            errs.append(f"E without B on {k} at {e['ts']}")
        else:
            stacks[k] -= 1
    errs += [f"{v} slices left open on {k}" for k, v in stacks.items() if v]
    return errs, len(ev)

if __name__ == "__main__":
    errs, n = check(sys.argv[1])
    print(("FAIL: " + "; ".join(errs[:5])) if errs else f"ok {n} events")
    sys.exit(1 if errs else 0)
