#!/usr/bin/env python3
"""Writes hand-made findings JSON (report-schema) for developing the report page before the
library writes its own: make_samples.py OUTDIR [--big FILE]. OUTDIR gets sample_one.json (one
input: steps, a step leak with stacks, blocks, a flame graph), sample_ranks.json (64 ranks on 8
nodes: heatmaps, ranks that stand out, common leak sites) and sample_baseline.json (a run beside
its baseline); --big FILE writes a ~10 MB one (256 ranks x 500 steps, every list at its limit)
for timing the page. Deterministic (seeded)."""
import json
import random
import sys

MIB = 1 << 20
S = 1_000_000_000  # ns per second

PY = ["train.py:{} in train_step", "model.py:{} in forward", "torch/nn/modules/module.py:{} in _call_impl",
      "layers.py:{} in attention", "optim.py:{} in step", "data.py:{} in collate"]
C = ["at::native::{}(at::Tensor const&)", "c10_npu::NPUCachingAllocator::malloc(void**, int, unsigned long)",
     "at_npu::native::OpCommand::Run()", "libtorch_npu.so+0x{:x}"]
OPS = ["aten._to_copy", "aten.mm", "aten.add", "aten.empty_strided", "aten.cat", "aten.bmm",
       "aten.softmax", "aten.layer_norm", "aten.gelu", "aten.addmm", "HcclAllReduce", "aten.copy_"]


def fmt_bytes(v):
    unit = ["B", "KiB", "MiB", "GiB", "TiB"]
    u = 0
    v = float(v)
    if v < 1023.5:
        return "%d B" % v
    while v >= 1023.5 and u < 4:
        v /= 1024
        u += 1
    return "%.*f %s" % (2 if v < 9.995 else 1 if v < 99.95 else 0, v, unit[u])


def stack(rnd, op, depth=5):
    py = [PY[0].format(88 + rnd.randrange(4))]
    for i in range(depth - 2):
        py.append(rnd.choice(PY[1:]).format(10 + rnd.randrange(400)))
    c = [C[0].format(op.split(".")[-1]), C[1], C[2], C[3].format(0x1000 + rnd.randrange(1 << 20))]
    return {"python": py, "c": c}


def timeline(rnd, n_steps, step_ns, leak_op, leak_bytes, leak_step, n_tracks=2, cols=1000,
             n_blocks=300, clock_track=False, depth=5):
    t1 = n_steps * step_ns + step_ns // 2
    tracks = []
    steps = [{"number": i + 1, "from_ns": step_ns // 4 + i * step_ns,
              "to_ns": step_ns // 4 + (i + 1) * step_ns - step_ns // 20} for i in range(n_steps)]
    blocks = []
    for k in range(n_tracks):
        base = (24 + 12 * k) * MIB // (k + 1)
        pts = []
        peak, peak_ns = 0, 0
        for c in range(cols):
            t = t1 * c // cols
            st = min(n_steps - 1, max(0, (t - step_ns // 4) // step_ns))
            phase = ((t - step_ns // 4) % step_ns) / step_ns
            act = int(base * (0.3 + 0.7 * max(0.0, 1 - abs(phase - 0.4) * 2.2)))
            leaked = leak_bytes * max(0, st - leak_step + 2) if k == 0 and st >= leak_step - 1 else 0
            hi = base // 3 + act + leaked
            lo = hi - rnd.randrange(max(1, base // 20))
            pts.append([t, lo, hi])
            if hi > peak:
                peak, peak_ns = hi, t
        tr = {"id": k, "input": 0, "pid": 2523740, "device": str(k // 2),
              "pool": ["PTA", "HAL"][k % 2], "label": "%s dev %d" % (["PTA", "HAL"][k % 2], k // 2),
              "peak": peak, "peak_ns": peak_ns, "end_bytes": pts[-1][2], "clock": None,
              "points": pts}
        if clock_track:  # as the library says it: per input, its points from the input's start
            tr["clock"] = {"shift_ns": None,
                           "note": "memory_record.csv recorded 342.1 days (29555074 s) after "
                           "operator_memory.csv: not one run's clock, so each keeps its own time "
                           "axis (pictures draw it from the input's start, spans measure each apart)"}
        tracks.append(tr)
    for b in range(n_blocks):
        op = rnd.choice(OPS)
        t0 = rnd.randrange(t1)
        life = rnd.randrange(step_ns // 10, step_ns)
        blocks.append({"id": b, "track": 0, "from_ns": t0, "to_ns": min(t1, t0 + life),
                       "bytes": rnd.randrange(256 << 10, 6 * MIB), "op": op, "owner": None,
                       "site": None, "stack": stack(rnd, op, depth)})
    return {"from_ns": 0, "to_ns": t1, "tracks": tracks, "samples": [], "steps": steps,
            "blocks": blocks}, steps


def flame(rnd, n_top=6, depth=4, fan=4):
    def node(name, value, d):
        n = {"name": name, "value": value, "children": []}
        if d < depth and value >= (12 << 10 if depth > 4 else 40 << 10):  # nodes under about 0.1% pruned
            left = value
            for i in range(fan):
                if left < value // 50:
                    break
                v = left * rnd.randrange(30, 80) // 100
                left -= v
                n["children"].append(node(rnd.choice(PY[1:]).format(rnd.randrange(500)), v, d + 1))
        return n
    root = {"name": "all", "value": 0, "children": []}
    for i in range(n_top):
        v = rnd.randrange(2, 40) * MIB
        root["children"].append(node(PY[0].format(80 + i), v, 1))
        root["value"] += v
    return root


def one(rnd, name="testdata/leaks.csv", n_steps=8, big=False):
    step_ns = 62_500_000
    leak_bytes, leak_step = 8_000_000, 3
    tl, steps = timeline(rnd, n_steps, step_ns, "aten._to_copy", leak_bytes, leak_step,
                         n_tracks=8 if big else 3, n_blocks=300, clock_track=not big,
                         depth=40 if big else 5)
    pk = tl["tracks"][0]
    # leaked blocks: one per leaked step, of the leak site 0
    sites = []
    sst = stack(rnd, "aten._to_copy", depth=6)
    sites.append({"id": 0, "kind": "step", "input": 0, "pool": "PTA", "count": n_steps - leak_step + 1,
                  "bytes": leak_bytes * (n_steps - leak_step + 1), "op": "aten._to_copy", "owner": None,
                  "first_step": leak_step, "ts_ns": steps[leak_step - 1]["from_ns"] + 1000, "ranks": 1,
                  "stack": sst})
    sites.append({"id": 1, "kind": "exit", "input": 0, "pool": "HAL", "count": 2, "bytes": 2 * 2096640,
                  "op": None, "owner": "MID:7", "first_step": None, "ts_ns": 200_000_000, "ranks": 1,
                  "stack": {"python": [], "c": []}})
    for k in range(2, 200 if big else 6):
        op = rnd.choice(OPS)
        sites.append({"id": k, "kind": "exit", "input": 0, "pool": "PTA", "count": rnd.randrange(1, 9),
                      "bytes": rnd.randrange(1 << 10, 1 << 20), "op": op, "owner": None, "first_step": None,
                      "ts_ns": rnd.randrange(tl["to_ns"]), "ranks": 1, "stack": stack(rnd, op, 40 if big else 5)})
    for s in range(leak_step, n_steps + 1):
        t0 = steps[s - 1]["from_ns"] + step_ns // 3
        tl["blocks"].append({"id": len(tl["blocks"]), "track": 0, "from_ns": t0, "to_ns": None,
                             "bytes": leak_bytes, "op": "aten._to_copy", "owner": None, "site": 0,
                             "stack": sst})
    tl["blocks"].append({"id": len(tl["blocks"]), "track": 0, "from_ns": 200_000_000, "to_ns": None,
                         "bytes": 2096640, "op": None, "owner": "MID:7", "site": 1,
                         "stack": {"python": [], "c": []}})
    tl["blocks"].sort(key=lambda b: -b["bytes"])
    tl["blocks"] = tl["blocks"][:300]
    peak_step = next((s["number"] for s in steps if s["from_ns"] <= pk["peak_ns"] <= s["to_ns"]), None)
    owners = [{"name": "aten._to_copy", "by": "op", "bytes": leak_bytes * (n_steps - leak_step + 1), "blocks": 6}]
    left = pk["peak"] - owners[0]["bytes"]
    for op in OPS[1:9]:
        v = left * rnd.randrange(20, 45) // 100
        left -= v
        owners.append({"name": op, "by": "op", "bytes": v, "blocks": rnd.randrange(1, 40)})
    owners.sort(key=lambda o: -o["bytes"])
    rest = {"owners": 14, "bytes": left, "blocks": 57}
    step_rows = []
    live = 20 * MIB
    for s in steps:
        a = rnd.randrange(40, 60) * MIB
        grow = leak_bytes if s["number"] >= leak_step else 0
        f = a - grow
        step_rows.append({"number": s["number"], "end_bytes": live + grow, "alloc_bytes": a,
                          "freed_bytes": f, "peak_bytes": live + a // 2, "leak_first": s["number"] == leak_step})
        live += grow
    ex = sites[1]
    ptext = "peak %s (PTA, device 0) at %.2f s in step %s: aten._to_copy holds %s of it" % (
        fmt_bytes(pk["peak"]), pk["peak_ns"] / S, peak_step, fmt_bytes(owners[0]["bytes"]))
    where_rows = [{"name": o["name"], "bytes": o["bytes"], "blocks": o["blocks"],
                   "stack": stack(rnd, o["name"])} for o in owners]
    for k in range(len(where_rows), 200 if big else 24):
        op = "%s#%d" % (rnd.choice(OPS), k)
        where_rows.append({"name": op, "bytes": rnd.randrange(1 << 10, 1 << 20), "blocks": rnd.randrange(1, 9),
                           "stack": stack(rnd, op, 40 if big else 5) if k % 3 else None})
    where_rows.sort(key=lambda r: -r["bytes"])
    doc = {
        "memscope_report": 1, "producer": "memscope-report@0.9.0",
        "inputs": [{"index": 0, "name": name, "rank": None, "node": None, "format": "memscope_dump",
                    "status": "ok", "error": "", "end": "exit"}],
        "detail": 0,
        "verdicts": [
            {"id": "peak", "level": "info", "section": "timeline", "bytes": pk["peak"], "text": ptext},
            {"id": "leaks", "level": "bad", "section": "leaks", "bytes": sites[0]["bytes"] + ex["bytes"],
             "count": sites[0]["count"] + ex["count"],
             "text": "leaks: %s held from step %d on by aten._to_copy (%s per step), %s unreleased at exit" % (
                 fmt_bytes(sites[0]["bytes"]), leak_step, fmt_bytes(leak_bytes), fmt_bytes(ex["bytes"]))},
            {"id": "growth", "level": "bad", "section": "steps", "bytes": leak_bytes,
             "text": "growth: live memory grows %s per step from step %d (%d steps)" % (fmt_bytes(leak_bytes), leak_step, n_steps)},
            {"id": "inefficient", "level": "unchecked", "section": "inefficient", "bytes": None, "count": None,
             "text": "inefficient: not checked (no ACCESS rows)"},
            {"id": "fragmentation", "level": "unchecked", "section": "timeline", "bytes": None,
             "text": "fragmentation: not checked (no pool totals)"},
            {"id": "clocks", "level": "warn", "section": "timeline",
             "text": "clocks: memory_record.csv recorded 342.1 days after operator_memory.csv: each on its own time axis"},
            {"id": "unchecked", "level": "unchecked", "section": "unchecked",
             "text": "not checked: memory held longer than needed (no ACCESS rows), fragmentation (no pool totals)"},
        ],
        "peak": {"input": 0, "pid": 2523740, "device": "0", "pool": "PTA", "bytes": pk["peak"],
                 "ts_ns": pk["peak_ns"], "step": peak_step, "owners": owners, "rest": rest},
        "leaks": {"end": "exit", "steps_checked": True, "why": "",
                  "exit": {"count": sum(s["count"] for s in sites if s["kind"] == "exit"),
                           "bytes": sum(s["bytes"] for s in sites if s["kind"] == "exit")},
                  "step": {"count": sites[0]["count"], "bytes": sites[0]["bytes"], "first_step": leak_step},
                  "sites": sites},
        "growth": {"per_step_bytes": leak_bytes, "steps": n_steps},
        "inefficient": {"checked": False, "why": "no ACCESS rows", "blocks": 0, "bytes": 0, "top": []},
        "fragmentation": {"checked": False, "why": "no pool totals", "reserved_bytes": 0, "allocated_bytes": 0,
                          "ts_ns": 0, "gap_bytes": None},
        "unchecked": ["inefficient: no ACCESS rows (memory accesses are recorded with --access)",
                      "fragmentation: no pool totals (PTA total/used attrs or a PyTorch snapshot)"],
        "timeline": tl, "steps": step_rows,
        "where": {"by": "op", "rows": where_rows, "flame": flame(rnd, 12 if big else 6, 8 if big else 4)},
        "ranks": None, "baseline": None,
        "notes": ["testdata/leaks.csv: 3 FREE rows of blocks never allocated (skipped)",
                  "a </script> in a note must not end the page's script <!-- nor this"],
    }
    return doc


def ranks(rnd, n=64, n_steps=40, cols=None, big=False):
    doc = one(rnd, "ranks/rank_0/memscope_dump.csv", n_steps=2000 if big else 8, big=big)
    nodes = max(1, n // 8)
    doc["inputs"] = [{"index": i, "name": "ranks/rank_%d/memscope_dump.csv" % i, "rank": i,
                      "node": "node%02d" % (i // 8), "format": "memscope_dump", "status": "ok",
                      "error": "", "end": "exit"} for i in range(n)]
    doc["inputs"][13]["status"] = "invalid"
    doc["inputs"][13]["error"] = "ranks/rank_13/memscope_dump.csv:1287: invalid size \"12x\""
    odd = {5: "leaks", 17: "growth", 42: "peak"}
    rows, live, growth = [], [], []
    for i in range(n):
        base = 30 * MIB + rnd.randrange(2 * MIB)
        g = 8_000_000 if i in (5, 17) else rnd.randrange(0, 4096)
        l, gr = [], []
        v = base
        for s in range(n_steps):
            d = g if s >= 3 else 0
            d += rnd.randrange(-2048, 2048)
            v += d
            l.append(v if i != 13 else None)
            gr.append(d if i != 13 else None)
        live.append(l)
        growth.append(gr)
        rows.append({"input": i, "rank": i, "node": "node%02d" % (i // 8),
                     "peak_bytes": (max(x for x in l if x is not None) if i != 13 else 0) + (40 * MIB if i == 42 else 0),
                     "exit_leak_bytes": 2096640 * 2 + (40_000_000 if i == 5 else 0),
                     "step_leak_bytes": g * (n_steps - 3) if g > 4096 else 0,
                     "growth_per_step": g, "stands_out": odd.get(i)})
    doc["detail"] = 42
    doc["ranks"] = {"rows": rows, "steps": list(range(1, n_steps + 1)), "live": live, "growth": growth,
                    "common_sites": [
                        {"op": "aten._to_copy", "owner": None, "pool": "PTA", "stack": stack(rnd, "aten._to_copy"),
                         "ranks": 4, "of": n, "bytes": 4 * 8_000_000 * 6, "kind": "step"},
                        {"op": None, "owner": "MID:7", "pool": "HAL", "stack": {"python": [], "c": []},
                         "ranks": n - 1, "of": n, "bytes": (n - 1) * 2096640 * 2, "kind": "exit"},
                        {"op": "aten.mm", "owner": None, "pool": "PTA", "stack": stack(rnd, "aten.mm"),
                         "ranks": 2, "of": n, "bytes": 3 * MIB, "kind": "exit"}]}
    v = doc["verdicts"]
    v[0]["text"] = v[0]["text"].replace("(PTA, device 0)", "(rank 42, PTA, device 0)")
    v.insert(len(v) - 1, {"id": "ranks", "level": "bad", "section": "ranks",
                          "count": 3, "text": "3 of %d ranks stand out: rank 42 (peak +40.0 MiB), rank 5 (leaks 38.1 MiB), rank 17 (growth 7.63 MiB per step)" % n})
    doc["notes"].append("ranks/rank_13/memscope_dump.csv: invalid size \"12x\" at line 1287: left out")
    return doc


def baseline(rnd):
    doc = one(rnd)
    doc["baseline"] = {
        "inputs": [{"index": 0, "name": "testdata/baseline.csv", "rank": None, "node": None,
                    "format": "memscope_dump", "status": "ok", "error": "", "end": "exit"}],
        "peak": {"run": doc["peak"]["bytes"], "base": doc["peak"]["bytes"] - 40_000_000},
        "leaks": {"run": doc["leaks"]["exit"]["bytes"] + doc["leaks"]["step"]["bytes"], "base": 2096640 * 2},
        "growth": {"run": 8_000_000, "base": None},
        "by": sorted([{"name": op, "by": "op", "run": r, "base": b, "diff": r - b} for op, r, b in
                      [(o, rnd.randrange(1 << 20, 60 << 20), rnd.randrange(1 << 20, 60 << 20)) for o in OPS]]
                     + [{"name": "aten._to_copy#new", "by": "op", "run": 48_000_000, "base": 0, "diff": 48_000_000}],
                     key=lambda x: -abs(x["diff"])),
        "ranks": []}
    doc["verdicts"].insert(len(doc["verdicts"]) - 1, {
        "id": "baseline", "level": "bad", "section": "baseline", "bytes": 40_000_000,
        "text": "against testdata/baseline.csv: peak +38.1 MiB, leaks +%s, the largest difference aten._to_copy#new +45.8 MiB" %
        fmt_bytes(doc["leaks"]["exit"]["bytes"] + doc["leaks"]["step"]["bytes"] - 2096640 * 2)})
    return doc


def main():
    out = sys.argv[1]
    for name, f in (("sample_one.json", one), ("sample_ranks.json", ranks), ("sample_baseline.json", baseline)):
        with open("%s/%s" % (out, name), "w") as fp:
            json.dump(f(random.Random(31)), fp, indent=None, separators=(",", ":"))
            fp.write("\n")
    if "--big" in sys.argv:
        doc = ranks(random.Random(7), n=256, n_steps=500, big=True)
        with open(sys.argv[sys.argv.index("--big") + 1], "w") as fp:
            json.dump(doc, fp, separators=(",", ":"))


if __name__ == "__main__":
    main()
