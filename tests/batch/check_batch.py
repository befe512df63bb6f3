#!/usr/bin/env python3
"""memscope-batch's records of the tree gen_ranks writes, against what memscope-leaks,
memscope-export --metric peak and memscope-inefficient say of each input alone, an independent
reading of each CSV, and what gen_ranks planted (see the comment at the top of gen_ranks.c).
Args: BIN_DIR TREE JSON CSV [TEXT]: the outputs of one `memscope-batch TREE` run in each format,
run in the current folder. Prints what failed; exits 1 when anything did."""
import csv
import json
import os
import re
import subprocess
import sys

FAILS = []
CHECKS = [0]


def check(cond, what):
    CHECKS[0] += 1
    if not cond:
        FAILS.append(what)
    return cond


def natural_key(path):
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", path)]


def run_json(argv):
    out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return json.loads(out.stdout)


# ---------------------------------------------------------------------------------------------
# what gen_ranks planted, from an input's path: rank R, device D = 2R % 8 + i (i = 0 or 1)

LEAK_RANKS = {5, 23, 42}


def planted(path):
    rank = int(re.search(r"/rank(\d+)/", path).group(1))
    dev = int(re.search(r"/device_(\d+)/", path).group(1))
    i = dev - 2 * rank % 8
    return {
        "rank": rank, "dev": dev, "i": i,
        "leak": rank in LEAK_RANKS,
        "big": rank == 17 and i == 0,
        "access": rank % 3 != 2,
        "trace": (i == 0 and rank % 16 == 3) or (rank == 42 and i == 1),
        "corrupt": rank == 30 and i == 1,
        "empty": rank == 50 and i == 0,
    }


def tree_inputs(tree):
    """The dump files under tree, in natural order, and their python_trace files."""
    found = []
    for top, dirs, files in os.walk(tree):
        for f in files:
            if f.startswith("memscope_dump_") and f.endswith(".csv"):
                traces = sorted(os.path.join(top, t) for t in files
                                if t.startswith("python_trace_"))
                found.append((os.path.join(top, f), traces))
    found.sort(key=lambda x: natural_key(x[0]))
    return found


def csv_facts(path):
    """Span of the timestamps, rows of ACCESS, steps (mstx step start ranges): read here."""
    ts = []
    accesses = steps = 0
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            if row["Timestamp(ns)"] != "N/A":
                ts.append(int(row["Timestamp(ns)"]))
            accesses += row["Event"] == "ACCESS"
            steps += row["Event"] == "MSTX" and row["Name"] == "step start"
    return max(ts) - min(ts), accesses, steps


# ---------------------------------------------------------------------------------------------

def check_record(bin_dir, rec, path, traces):
    p = planted(path)
    name = path
    check(rec["rank"] == p["rank"], f"{name}: rank {rec['rank']}")
    check(str(rec["device"]) == str(p["dev"]), f"{name}: device {rec['device']}")
    if p["corrupt"] or p["empty"]:
        check(rec["status"] == "invalid" and rec["error"], f"{name}: status {rec['status']}")
        for k in ("events", "peak_bytes", "exit_leaks", "stands_out"):
            check(rec.get(k) in (None, []), f"{name}: error record with {k} {rec.get(k)}")
        return
    if not check(rec["status"] == "ok" and rec["error"] == "",
                 f"{name}: status {rec['status']} {rec['error']}"):
        return
    size = os.path.getsize(path) + sum(os.path.getsize(t) for t in traces)
    check(rec["bytes"] == size, f"{name}: bytes {rec['bytes']}, its files hold {size}")

    leaks = run_json([f"{bin_dir}/memscope-leaks", "-q", "--format", "json", path])["summary"]

    def counted(kind):
        """memscope-leaks' totals of a kind without HAL when a pool inside HAL is there too
        (its text: "not summed: PTA lies inside HAL"): the leaks and bytes batch counts"""
        pools = [p for p in leaks[kind]["pools"]
                 if not (leaks[kind]["pools_nested"] and p["pool"] == "HAL")]
        return sum(p["leaks"] for p in pools), sum(p["bytes"] for p in pools)

    (exit_n, exit_b), (step_n, step_b) = counted("exit"), counted("step")
    check(leaks["exit"]["pools_nested"], f"{name}: exit leaks in PTA and HAL expected")
    for key, want in (("events", leaks["events"]), ("allocations", leaks["allocations"]),
                      ("frees", leaks["frees"]),
                      ("exit_leaks", exit_n), ("exit_leak_bytes", exit_b),
                      ("step_leaks", step_n), ("step_leak_bytes", step_b)):
        check(rec[key] == want, f"{name}: {key} {rec[key]}, memscope-leaks says {want}")

    folded = subprocess.run([f"{bin_dir}/memscope-export", "-q", "--metric", "peak", "--format",
                             "folded", path], stdout=subprocess.PIPE, check=True).stdout
    peak = sum(int(line.rsplit(b" ", 1)[1]) for line in folded.splitlines() if line)
    check(rec["peak_bytes"] == peak, f"{name}: peak_bytes {rec['peak_bytes']}, folded {peak}")
    check(rec["peak_pool"] == "PTA", f"{name}: peak_pool {rec['peak_pool']}")
    check(rec["pool_peaks"] == {"PTA": peak}, f"{name}: pool_peaks {rec['pool_peaks']}")

    span, accesses, steps = csv_facts(path)
    check(rec["span_ns"] == span, f"{name}: span_ns {rec['span_ns']}, the CSV says {span}")
    check(rec["accesses"] == accesses, f"{name}: accesses {rec['accesses']}, CSV {accesses}")
    check(rec["steps"] == steps == 8, f"{name}: steps {rec['steps']}, CSV {steps}")
    check((accesses > 0) == p["access"], f"{name}: ACCESS rows {accesses}")
    if p["access"]:
        ineff = run_json([f"{bin_dir}/memscope-inefficient", "-q", "--format", "json",
                          path])["summary"]
        check(rec["inefficient_blocks"] == ineff["blocks"]
              and rec["inefficient_bytes"] == ineff["bytes"],
              f"{name}: inefficient {rec['inefficient_blocks']} {rec['inefficient_bytes']}, "
              f"memscope-inefficient says {ineff['blocks']} {ineff['bytes']}")
    else:
        check(rec["inefficient_blocks"] is None and rec["inefficient_bytes"] is None,
              f"{name}: inefficient {rec['inefficient_blocks']} without ACCESS rows")

    # gen_ranks frees every block of a step by its end, but for the planted 4 MiB leaks
    growth = 4 << 20 if p["leak"] else 0
    check(rec["growth_per_step"] == growth, f"{name}: growth_per_step {rec['growth_per_step']}")
    if p["big"]:
        check(rec["peak_step"] == 4, f"{name}: peak_step {rec['peak_step']}, planted in 4")
    want_rows = sum(sum(1 for _ in open(t)) - 1 for t in traces)
    check((rec["trace_rows"] or 0) == want_rows and bool(traces) == p["trace"],
          f"{name}: trace_rows {rec['trace_rows']}, {len(traces)} trace files hold {want_rows}")
    return rec


def main():
    bin_dir, tree, json_path, csv_path = sys.argv[1:5]
    text_path = sys.argv[5] if len(sys.argv) > 5 else None
    inputs = tree_inputs(tree)
    check(len(inputs) == 128, f"{len(inputs)} dump files in the tree")

    lines = [json.loads(line) for line in open(json_path)]
    records = [r for r in lines if r.get("type") == "input"]
    across = {r["figure"]: r for r in lines if r.get("type") == "across"}
    summary = [r for r in lines if r.get("type") == "summary"]
    check(len(records) == len(inputs), f"{len(records)} input records")
    check(len(summary) == 1 and lines[-1].get("type") == "summary", "one summary, last")
    check([r["index"] for r in records] == list(range(len(records))), "indexes 0..n-1")
    check([r["input"] for r in records] == [p for p, _ in inputs],
          "the inputs in natural path order")

    standing = set()
    for rec, (path, traces) in zip(records, inputs):
        check_record(bin_dir, rec, path, traces)
        if rec.get("stands_out"):
            standing.add(path)
        p = planted(path)
        if p["big"]:
            check("peak_bytes" in (rec.get("stands_out") or []),
                  f"{path}: stands_out {rec.get('stands_out')}, the outsized peak")
        if p["leak"]:
            check(any(f.startswith("step_leak") for f in rec.get("stands_out") or []),
                  f"{path}: stands_out {rec.get('stands_out')}, a leaking rank")
    want = {p for p, _ in inputs if planted(p)["leak"] or planted(p)["big"]}
    check(standing == want, f"stand out: {sorted(standing - want)} not planted, "
          f"{sorted(want - standing)} planted but not reported")

    ok = [r for r in records if r["status"] == "ok"]
    if summary:
        s = summary[0]
        check((s["inputs"], s["read"], s["invalid"], s["error"]) == (128, 126, 2, 0),
              f"summary: inputs {s['inputs']} read {s['read']} invalid {s['invalid']} "
              f"error {s['error']}")
    # the cross-rank figures of the records
    across_standing = set()
    for a in across.values():
        across_standing |= {records[i]["input"] for i in a.get("stand_out", [])}
    check(across_standing == want, f"across stand_out: {sorted(across_standing ^ want)} differ")
    for fig in ("peak_bytes", "events", "step_leak_bytes", "inefficient_bytes"):
        a = across.get(fig)
        if not check(a is not None, f"no across record of {fig}"):
            continue
        vals = [r[fig] for r in ok if r[fig] is not None]
        check(a["inputs"] == len(vals), f"across {fig}: inputs {a['inputs']}")
        check(a["min"] == min(vals) and a["max"] == max(vals),
              f"across {fig}: min {a['min']} max {a['max']}, records {min(vals)} {max(vals)}")
        check(min(vals) <= a["median"] <= max(vals), f"across {fig}: median {a['median']}")
        check(records[a["max_input"]][fig] == max(vals) if isinstance(a["max_input"], int)
              else True, f"across {fig}: max_input {a['max_input']}")

    # CSV: the same records, the same columns; a JSON record's KEY_overflowed flags are the CSV's
    # column overflowed
    with open(csv_path, newline="") as f:
        rows = list(csv.reader(f))
    for rec in records:
        rec["overflowed"] = [k[:-len("_overflowed")] for k in list(rec) if k.endswith("_overflowed")]
        for k in rec["overflowed"]:
            check(rec[k] == 2**63 - 1, f"{rec['input']}: {k} overflowed at {rec[k]}")
            del rec[k + "_overflowed"]
    keys = [k for k in records[0] if k != "type"] if records else []
    check(rows[0] == ["row"] + keys, f"CSV header {rows[0][:5]}...")
    body = [r for r in rows[1:] if r and r[0] == "input"]
    check(len(body) == len(records), f"{len(body)} CSV input rows")
    for row, rec in zip(body, records):
        for k, v in zip(keys, row[1:]):
            j = rec[k]
            if j is None:
                w = ""
            elif isinstance(j, dict):
                w = ";".join(f"{a}={b}" for a, b in j.items())
            elif isinstance(j, list):
                w = ";".join(j)
            else:
                w = str(j)
            check(v == w, f"CSV {rec['input']} {k}: {v!r}, JSON {j!r}")
    check([r[0] for r in rows[1 + len(body):]] == ["min", "median", "max", "imbalance"],
          f"CSV rows after the inputs: {[r[0] for r in rows[1 + len(body):]]}")

    # text: the inputs its "stand out" section names ("#INDEX rank R device D (FILE): ...")
    # are the planted ones
    if text_path:
        text = open(text_path).read()
        part = re.split(r"(?m)^stand out( \(by [^)]*\))?:$", text, maxsplit=1)
        if check(len(part) == 3, "text: no \"stand out:\" section"):
            named = set()
            for m in re.finditer(r"(?m)^ +#(\d+) rank (\d+) device (\d+)(?: pid \d+)?(?: node \S+)? "
                                 r"\(([^)]*)\):", part[2]):
                rec = records[int(m.group(1))]
                check(rec["input"].endswith("/" + m.group(4))
                      and (rec["rank"], rec["device"]) == (int(m.group(2)), m.group(3)),
                      f"text stand out: {m.group(0)} is not input {rec['input']}")
                named.add(rec["input"])
            check(named == want, f"text stand out: {sorted(named ^ want)} differ")

    for f in FAILS:
        print("FAIL:", f)
    print(f"check_batch: {CHECKS[0]} checks, {len(FAILS)} failed")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
