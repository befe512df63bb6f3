#!/usr/bin/env python3
"""Check a Chrome trace event JSON file as Perfetto and chrome://tracing read it: an object with
a traceEvents array; every event has a known ph, a pid, and (but metadata) a finite ts >= 0;
counters have numeric args; B/E slices nest per (pid, tid) in time order, and so do X slices
(dur >= 0, no two overlapping without one holding the other); every pid with events is named by a
process_name metadata event.
Usage: check_chrome_trace.py FILE -> 'ok N events' or 'FAIL: ...', exit 0/1.

check_chrome_trace.py --same-curve FULL REDUCED TICK_NS: REDUCED (memscope-export's default
samples) draws the curves of FULL (--resolution 0) at a resolution of TICK_NS: for every counter
track (pid, name, series), every sample of REDUCED is one of FULL, and in every tick (TICK_NS
from the Unix epoch; timestamps are microseconds since otherData.origin_s) the lowest, highest
and last values, counting the value held from before the tick, are the same in both, and so is
the final value. Prints 'ok N tracks, F samples -> R' or 'FAIL: ...', exit 0/1."""
import json, math, sys
from decimal import Decimal


def check(path):
    d = json.load(open(path))
    ev = d.get("traceEvents") if isinstance(d, dict) else None
    if not isinstance(ev, list):
        return ["no traceEvents array"], 0
    errs, stacks, named, used = [], {}, set(), set()
    for i, e in enumerate(ev):
        ph = e.get("ph")
        if ph not in ("M", "C", "B", "E", "i", "X"):
            errs.append(f"event {i}: ph {ph!r}")
            continue
        if not isinstance(e.get("pid"), int):
            errs.append(f"event {i}: pid")
        if ph == "M":
            if e.get("name") == "process_name":
                named.add(e.get("pid"))
            continue
        used.add(e.get("pid"))
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or not math.isfinite(ts) or ts < 0:
            errs.append(f"event {i}: ts {ts!r}")
        if ph == "C" and not (isinstance(e.get("args"), dict) and e["args"] and
                              all(isinstance(v, (int, float)) for v in e["args"].values())):
            errs.append(f"event {i}: counter args")
        if ph in ("B", "i", "C", "X") and not isinstance(e.get("name"), str):
            errs.append(f"event {i}: name")
        if ph == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            errs.append(f"event {i}: dur {e.get('dur')!r}")
    errs += [f"pid {p} has no process_name" for p in sorted(used - named, key=str)]
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
    # complete slices: by start, longest first; each inside the innermost still open, or after it
    xs = {}
    for e in ev:
        if e.get("ph") == "X" and isinstance(e.get("dur"), (int, float)):
            xs.setdefault((e["pid"], e.get("tid")), []).append(
                (Decimal(str(e["ts"])), Decimal(str(e["ts"])) + Decimal(str(e["dur"]))))
    for k, spans in xs.items():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ = []
        for a, b in spans:
            while open_ and open_[-1] <= a:
                open_.pop()
            if open_ and b > open_[-1]:
                errs.append(f"X slice [{a}, {b}] on {k} overlaps one ending at {open_[-1]}")
                break
            open_.append(b)
    return errs, len(ev)


def tracks(path):
    """{(pid, name, series): [(abs_ns, value), ...]} in file order (one track's are in time order)."""
    d = json.load(open(path), parse_float=Decimal)
    origin = int(d.get("otherData", {}).get("origin_s", 0)) * 10**9
    out = {}
    for e in d["traceEvents"]:
        if e.get("ph") != "C":
            continue
        ns = origin + int(Decimal(e["ts"]) * 1000)
        for k, v in e["args"].items():
            out.setdefault((e["pid"], e["name"], k), []).append((ns, int(v)))
    return out


def envelopes(series, tick):
    """{tick: (lowest, highest, last)} with the value held from before each tick counted."""
    env, held = {}, None
    for ns, v in series:
        b = ns // tick
        if b not in env:
            env[b] = [v, v, v] if held is None else [min(held, v), max(held, v), v]
        env[b] = [min(env[b][0], v), max(env[b][1], v), v]
        held = v
    return env


def same_curve(full_path, reduced_path, tick):
    full, red = tracks(full_path), tracks(reduced_path)
    errs = []
    if set(full) != set(red):
        errs.append(f"tracks differ: {sorted(set(full) ^ set(red), key=str)[:3]}")
    for k in sorted(set(full) & set(red), key=str):
        f, r = full[k], red[k]
        if any(a[0] > b[0] for a, b in zip(r, r[1:])):
            errs.append(f"{k}: samples out of time order")
        if not set(r) <= set(f):
            errs.append(f"{k}: samples not in the full trace: {sorted(set(r) - set(f))[:3]}")
        if f[-1][1] != r[-1][1]:
            errs.append(f"{k}: final value {r[-1][1]}, wanted {f[-1][1]}")
        ef, er = envelopes(f, tick), envelopes(r, tick)
        held = None
        for b in sorted(ef):
            want = ef[b]
            got = er.get(b)
            # a tick left out of REDUCED held one value: the one before it
            if got is None:
                got = [held, held, held]
            if got != want:
                errs.append(f"{k}: tick {b}: lowest, highest, last {got}, wanted {want}")
                break
            held = want[2]
        extra = set(er) - set(ef)
        if extra:
            errs.append(f"{k}: ticks with no sample in the full trace: {sorted(extra)[:3]}")
    n_f = sum(len(v) for v in full.values())
    n_r = sum(len(v) for v in red.values())
    return errs, f"{len(full)} tracks, {n_f} samples -> {n_r}"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--same-curve":
        errs, what = same_curve(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        print(("FAIL: " + "; ".join(errs[:5])) if errs else f"ok {what}")
        sys.exit(1 if errs else 0)
    errs, n = check(sys.argv[1])
    print(("FAIL: " + "; ".join(errs[:5])) if errs else f"ok {n} events")
    sys.exit(1 if errs else 0)
