#!/bin/sh
# Golden CLI cases of memscope-leaks: each rule's edges on hand-built dumps, the report formats
# (the grouped text report, the reference's own lines, JSON, CSV), several inputs, the second
# pass, and bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
TOOL="$BIN/memscope-leaks"
L=$TOOL
T="$SRC/testdata"
cd "$T/leaks" || exit 1

# steps_mstx.csv, mstx steps 1-4 (see testdata/README.txt): b freed at the same timestamp as
# the end of step 3 but before it (lower ID): no leak; c freed 1 ns after it: leak; d allocated
# between steps 2 and 3 counts to step 2; h reuses g's address; f (step 0) and a (step 1) are
# skipped; two KERNEL_LAUNCH rows precede the leaks (kernel_2); the HAL block counts only with
# --pool; the gap analysis; unreleased at exit grouped by owner, stack and pool. *.ref are the
# reference's own lines (--format reference), byte for byte what the text report was before it
# grouped leaks; *.txt the grouped text report
for f in steps_mstx steps_mstx_hal steps_mstx_skip0 steps_mstx_alive2; do
	case $f in
	steps_mstx) args= ;;
	steps_mstx_hal) args="--kinds step --pool hal,pta" ;;
	steps_mstx_skip0) args="--kinds step --skip-steps 0" ;;
	steps_mstx_alive2) args="--kinds step --min-steps-alive 2" ;;
	esac
	# shellcheck disable=SC2086
	expect_out $f.txt $args steps_mstx.csv
	# shellcheck disable=SC2086
	expect_out $f.ref --format reference $args steps_mstx.csv
done
expect_out steps_mstx_leaks.csv --format csv steps_mstx.csv
# the text report: no "Mb(s)" (only the reference's lines have them), binary units, times in
# seconds from the input's first row; JSON and CSV: exact bytes and ns
expect_status 0 "$L" -q steps_mstx.csv
if ! grep -q 'Mb(s)' "$WORK/out" && grep -q '^#1 PTA 3.50 MiB in 2 blocks, allocated in step 2$' "$WORK/out" &&
	grep -q '^   first steps_mstx.csv:17 at 0.000023 s (process 100, device 0, 0x000012c043000000)$' "$WORK/out"; then ok; else bad "text units: $(cat "$WORK/out")"; fi
expect_status 0 "$L" -q --format reference steps_mstx.csv
if grep -q '^Direct Pytorch Caching memory pool leak of 3.000000 Mb(s) at 0x12c043000000 in kernel_2 at step 2\.$' "$WORK/out" && ! grep -q 'MiB' "$WORK/out"; then ok; else bad "reference units"; fi
if grep -q '^step,steps_mstx.csv,100,0,PTA,0x000012c043000000,3145728,4,10,17,1764753080000024000,2,3,2,,,,1,$' steps_mstx_leaks.csv; then ok; else bad "csv units"; fi
# the double free and the free without MALLOC are counted, not fatal
expect_status 0 "$L" steps_mstx.csv
if grep -q '^memscope-leaks: steps_mstx.csv:25: FREE with no live MALLOC .*; 2 such row(s)' "$WORK/err"; then ok; else bad "unmatched FREE not reported: $(cat "$WORK/err")"; fi

# the JSON report: fields, kinds, and totals that agree with the findings
expect_status 0 "$L" -q --format json steps_mstx.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
leaks = d["leaks"]
step = [x for x in leaks if x["kind"] == "step"]
exit_ = [x for x in leaks if x["kind"] == "exit"]
assert [(x["ptr"], x["size"], x["alloc_step"], x["detected_step"], x["event_id"]) for x in step] == [
    ("0x000012c043000000", 3145728, 2, 3, 10), ("0x000012c044000000", 8192, 2, 3, 13),
    ("0x000012c047000000", 524288, 2, 3, 18)], step
for x in leaks:
    for k in ("kind", "pid", "device", "pool", "ptr", "size", "allocation_id", "event_id",
              "alloc_step", "detected_step", "stack"):
        assert k in x, k
    assert x["device"] == "0" and x["pid"] == 100
assert step[1]["stack"]["python"] == ["model.py(40): forward", "train.py(12): step"]  # innermost first
s = d["summary"]
assert s["step"]["leaks"] == 3 and s["step"]["bytes"] == sum(x["size"] for x in step)
assert s["exit"]["bytes"] == sum(x["size"] for x in exit_) == 5251072
assert sum(g["count"] for g in s["exit"]["groups"]) == len(exit_) == 4
assert s["exit"]["groups"][1]["owner"] == "CANN@RUNTIME"
assert s["unmatched_frees"] == 2 and s["mark"] is None
# per pool, and a sum over HAL and the PTA blocks carved out of it flagged
assert s["exit"]["pools"] == [{"pool": "PTA", "leaks": 3, "bytes": 3153920},
                              {"pool": "HAL", "leaks": 1, "bytes": 2097152}], s["exit"]["pools"]
assert s["exit"]["pools_nested"] is True and s["step"]["pools_nested"] is False
# every finding is in one group, the groups' totals are the findings'
g = {x["group"]: x for x in d["groups"]}
assert sorted(g) == list(range(1, len(g) + 1)) and s["group_by"] == "stack" and s["top"] is None
for k, x in g.items():
    mine = [y for y in leaks if y["group"] == k]
    assert x["count"] == len(mine) and x["bytes"] == sum(y["size"] for y in mine), x
    assert all(y["kind"] == x["kind"] and y["pool"] == x["pool"] for y in mine), x
    assert x["first"]["timestamp_ns"] == min(y["timestamp_ns"] for y in mine), x
assert [x["steps"] for x in d["groups"] if x["kind"] == "exit"] == [[0, 1], [2], [2]]
assert [x["alloc_step"] for x in exit_] == [0, 1, 2, 2]
assert s["exit"]["groups"] == [x for x in d["groups"] if x["kind"] == "exit"]
f = d["fluctuation"][0]
assert (f["pool"], f["min_gap"]["step"], f["max_gap"]["step"]) == ("PTA", 2, 3)
assert f["min_gap"]["min"] == 4194304 and f["min_gap"]["max"] == 7348224
PY
then ok; else bad "json report of steps_mstx.csv"; fi

# SYSTEM STEP rows: step n ends at STEP row n; the stray mstx "step start" row is ignored
expect_out steps_system.txt steps_system.csv
expect_out steps_system.ref --format reference steps_system.csv
expect_out steps_system_skip0.txt --kinds step --skip-steps 0 steps_system.csv
expect_out steps_system_skip0.ref --format reference --kinds step --skip-steps 0 steps_system.csv
expect_status 0 "$L" steps_system.csv
if grep -q 'process 200: 1 step row(s) of another kind ignored: its steps come from SYSTEM STEP rows' "$WORK/err"; then ok; else bad "ignored step rows not reported"; fi
# no call stacks in the input: grouped by op, said once on stderr and in the section's line
if [ "$(grep -c '^memscope-leaks: steps_system.csv: no call stacks: leaks grouped by op$' "$WORK/err")" -eq 1 ] &&
	grep -q '^Unreleased at exit: 2 blocks in 1 group by op (no call stacks), ATB 2.00 MiB$' "$WORK/out"; then ok; else bad "no-stack fallback note: $(cat "$WORK/err")"; fi
expect_status 0 "$L" --group-by op steps_system.csv
if ! grep -q 'no call stacks' "$WORK/err"; then ok; else bad "fallback note with --group-by op"; fi
# a STEP row written after a later FREE row: a second pass gives the in-order file's answer
expect_status 0 "$L" -q late.csv
sed 's/late\.csv/steps_system.csv/' "$WORK/out" >"$WORK/late.txt"
expect_same "$WORK/late.txt" steps_system.txt
expect_status 0 "$L" -q --format reference late.csv
expect_same "$WORK/out" steps_system.ref
expect_status 3 "$L" -q - <late.csv
expect_err_line '^memscope-leaks: -:7: step or mark row out of time order: a second pass is needed, and standard input cannot be read twice: save it to a file$'
# a user's own range written late does not force a second pass: only step starts and ends do
awk 'NR==7{print "13,MSTX,Range_start,\"dataloader\",1764753080000011500,200,209,1,N/A,,,"} {print}' steps_system.csv >"$WORK/user_late.csv"
expect_status 0 "$L" -q --format reference - <"$WORK/user_late.csv"
expect_same "$WORK/out" steps_system.ref

# the marked range on a legacy two-process file with repeating IDs and HAL FREE rows on device
# N/A: Y (allocated between A and B, freed after C) and W leak; X, freed before C, does not
# (the reference drops the N/A rows and reports X too)
expect_out mark_legacy.txt --mark iter mark_legacy.csv
expect_out mark_legacy.ref --format reference --mark iter mark_legacy.csv
expect_status 0 "$L" -q --format reference --mark iter --start-index 1 --kinds mark --pool hal mark_legacy.csv
if grep -q '^No hal memory leaks detected on device 1\.$' "$WORK/out" && ! grep -q 'device 0' "$WORK/out"; then ok; else bad "--start-index 1: $(cat "$WORK/out")"; fi
expect_status 3 "$L" -q --mark nothing mark_legacy.csv
expect_err_line "^memscope-leaks: no device has 3 Mark rows 'nothing' \(from index 0; the most any has is 0\)$"

# the reference's sample: its 3 HAL and 4 PTA MALLOCs without FREE are unreleased at exit
expect_status 0 "$L" -q --format csv "$T/baseline.csv"
if [ "$(grep -c '^exit,.*,HAL,' "$WORK/out")" -eq 3 ] && [ "$(grep -c '^exit,.*,PTA,' "$WORK/out")" -eq 4 ]; then ok; else bad "baseline.csv exit leaks"; fi
# PTA blocks are carved out of HAL memory: totals per pool, never one sum of both (39.0 MiB)
expect_status 0 "$L" "$T/baseline.csv" "$T/leaks.csv"
if ! grep -q '39\.0 MiB' "$WORK/out" "$WORK/err" &&
	grep -q '^summary of 2 inputs: step leaks: not checked in any of the 2 inputs (no steps: .*); unreleased at exit 17 in 2 inputs (PTA 7.64 MiB in 10 blocks, HAL 31.4 MiB in 7 blocks, not summed: PTA lies inside HAL); 48 allocations, 31 frees$' "$WORK/out" &&
	grep -q '^memscope-leaks: .* 17 unreleased at exit (PTA 7.64 MiB in 10 blocks, HAL 31.4 MiB in 7 blocks, not summed: PTA lies inside HAL), from 251 events$' "$WORK/err"; then ok; else bad "nested pools summed: $(tail -1 "$WORK/out") $(tail -1 "$WORK/err")"; fi
# the op of a block: the op open on its thread at its MALLOC (the leaked tensor of leaks.csv)
if grep -A1 '^#2 PTA 7.63 MiB in 2 blocks$' "$WORK/out" | grep -q '^   op torch._ops.aten._to_copy.default$'; then ok; else bad "op of leaks.csv's tensor"; fi

# groups.csv: blocks in ops (one nested, one on a thread without ops), C stacks that differ only
# in paths, offsets and addresses, owner tags; none freed
expect_out groups_stack.txt groups.csv
expect_out groups_op.txt --group-by op groups.csv
expect_out groups_owner.txt --group-by owner groups.csv
# the two C stacks are one group, the frames demangled and without paths, offsets, addresses
if grep -A4 '^#3 PTA 2.00 MiB in 2 blocks$' groups_stack.txt | grep -q '^   c  at::native::empty_npu(c10::ArrayRef<long>) (libtorch_npu.so)$'; then ok; else bad "C frames not merged"; fi
# JSON keeps each block's raw frames, the group the cleaned ones
expect_status 0 "$L" -q --format json groups.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
raw = [x["stack"]["c"] for x in d["leaks"] if x["group"] == 3]
assert len(raw) == 2 and raw[0] != raw[1] and "+0x10b) [0x7f3a9f4445dc]" in raw[0][0], raw
g = d["groups"][2]
assert g["stack"]["c"][1] == "at::native::empty_npu(c10::ArrayRef<long>) (libtorch_npu.so)", g
assert g["op"] == "torch._ops.aten.add.Tensor" and g["count"] == 2 and g["bytes"] == 2097152
ops = {x["ptr"]: x["op"] for x in d["leaks"]}
assert ops["0x000012c040a00000"] == "torch._ops.aten.addmm.default"  # nested in linear
assert ops["0x000012c040c00000"] == "torch._ops.aten.linear.default"  # after addmm ended
assert ops["0x000012c040200000"] is None  # its thread has no ops
PY
then ok; else bad "json groups of groups.csv"; fi
# --top: the N largest groups per input and kind, the rest in one line; in CSV and JSON too
expect_status 0 "$L" -q --top 2 groups.csv
if [ "$(grep -c '^#' "$WORK/out")" -eq 2 ] && grep -q '^\.\.\. 4 more groups: 5 blocks, PTA 2.56 MiB$' "$WORK/out"; then ok; else bad "--top 2: $(cat "$WORK/out")"; fi
expect_status 0 "$L" -q --top 0 groups.csv
expect_same "$WORK/out" groups_stack.txt
expect_status 0 "$L" -q --format csv --top 1 groups.csv
if [ "$(wc -l <"$WORK/out")" -eq 2 ] && grep -q '^exit,groups.csv,500,0,HAL,.*,CANN@RUNTIME,,,1,torch._ops.aten.mm.default$' "$WORK/out"; then ok; else bad "csv --top 1: $(cat "$WORK/out")"; fi
expect_status 0 "$L" -q --format json --top 2 --group-by owner groups.csv
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [g["owner"] for g in d["groups"]] == ["CANN@RUNTIME", "PTA@model"] and d["summary"]["top"] == 2
assert d["groups"][1]["differ"] == {"op": True, "owner": False, "stack": False}
assert len(d["leaks"]) == 3 and d["summary"]["exit"]["leaks"] == 7' "$WORK/out"; then ok; else bad "json --top 2 --group-by owner"; fi

# a capture file gives the same report as the dump it came from (positions are record numbers)
"$BIN/memscope-convert" -q steps_mstx.csv -o "$WORK/steps_mstx.mscap"
expect_status 0 "$L" -q "$WORK/steps_mstx.mscap"
grep -v '^   first ' "$WORK/out" >"$WORK/cap.txt"
grep -v '^   first ' steps_mstx.txt >"$WORK/csv.txt"
expect_same "$WORK/cap.txt" "$WORK/csv.txt"
expect_status 0 "$L" -q --format reference "$WORK/steps_mstx.mscap"
expect_same "$WORK/out" steps_mstx.ref

# several inputs: each input's findings (step, mark, exit) under its own header, the inputs
# with nothing to report in one line, one summary; one "no steps" line for all inputs, one
# "no allocations or frees" line for those without MALLOC or FREE rows (not also "no steps")
head -2 "$T/baseline.csv" >"$WORK/quiet1.csv"
cp "$WORK/quiet1.csv" "$WORK/quiet2.csv"
expect_status 0 "$L" "$WORK/quiet1.csv" steps_mstx.csv "$WORK/quiet2.csv" groups.csv steps_system.csv
if [ "$(grep -c '^==> ' "$WORK/out")" -eq 3 ] &&
	awk '/^==> /{cur=$2} /^   first /{split($2, a, ":"); if (a[1] != cur) bad=1} END{exit bad}' "$WORK/out" &&
	grep -q "^no leaks in 2 of 5 inputs: $WORK/quiet1.csv, $WORK/quiet2.csv\$" "$WORK/out" &&
	grep -q '^summary of 5 inputs: step leaks 4 in 2 inputs (5.51 MiB: PTA 3.51 MiB in 3 blocks, ATB 2.00 MiB in 1 block), not checked in 3 of 5 inputs (no allocations or frees; no steps); ' "$WORK/out" &&
	[ "$(grep -c 'no steps' "$WORK/err")" -eq 1 ] &&
	grep -q "^memscope-leaks: step leaks not checked in 1 of 5 inputs (groups.csv): no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor ProfilerStep#N ops\$" "$WORK/err" &&
	[ "$(grep -c 'no allocations or frees' "$WORK/err")" -eq 1 ] &&
	grep -q "^memscope-leaks: no allocations or frees in 2 of 5 inputs ($WORK/quiet1.csv, $WORK/quiet2.csv): nothing to check in them " "$WORK/err"; then ok; else bad "several inputs: $(cat "$WORK/out" "$WORK/err")"; fi
# the exit leaks of steps_system.csv are under its header, not under the first input's
if awk '/^==> /{cur=$2} /^Unreleased at exit: 2 blocks/{print cur}' "$WORK/out" | grep -qx steps_system.csv; then ok; else bad "exit leaks under the wrong input"; fi
# 100 inputs: one "no steps" line that counts them, no header without findings
i=0
while [ $i -lt 100 ]; do cp "$T/baseline.csv" "$WORK/rank$i.csv"; i=$((i + 1)); done
expect_status 0 "$L" "$WORK"/rank*.csv
if [ "$(grep -c 'no steps' "$WORK/err")" -eq 1 ] && grep -q '^memscope-leaks: step leaks not checked in 100 of 100 inputs: no steps: neither mstx' "$WORK/err" &&
	grep -q '^memscope-leaks: no call stacks in 100 of 100 inputs: their leaks grouped by op$' "$WORK/err" &&
	[ "$(grep -c '^==> ' "$WORK/out")" -eq 100 ] && [ "$(grep -c '^Unreleased at exit' "$WORK/out")" -eq 101 ] &&
	[ "$(wc -l <"$WORK/err")" -eq 3 ]; then ok; else bad "100 inputs: $(cat "$WORK/err")"; fi
# ... and one section across them: 7 groups, each in every input, as much in each
if [ "$(grep -c '^Across 100 inputs$' "$WORK/out")" -eq 1 ] &&
	[ "$(sed -n '/^Across/,$p' "$WORK/out" | grep -c '^#[0-9]* .* in 100 of 100 inputs, .* each$')" -eq 7 ] &&
	grep -q '^#1 HAL 269 MiB in 100 blocks, in 100 of 100 inputs, 2.69 MiB each$' "$WORK/out"; then ok; else bad "100 inputs across: $(sed -n '/^Across/,$p' "$WORK/out" | head -5)"; fi
expect_status 0 "$L" -q --format reference "$WORK"/rank*.csv
if [ ! -s "$WORK/out" ]; then ok; else bad "reference lines of inputs without any: $(head -3 "$WORK/out")"; fi
expect_status 0 "$L" -q --kinds step steps_mstx.csv steps_system.csv
if [ "$(grep -c '^==> ' "$WORK/out")" -eq 2 ] && grep -q '^summary of 2 inputs: step leaks 4 in 2 inputs ' "$WORK/out"; then ok; else bad "two inputs: $(cat "$WORK/out")"; fi

# across inputs: four ranks, one stack leaking on all of them (rank2 3x as much as rank0), one on
# rank3 only, one on ranks 1 and 2 as much on each; C frames differ per rank only in offset and
# address. The section merges each stack's groups, ranks them by total, --top cuts it; the inputs
# are named by the shortest ending of their paths that tells them apart
python3 - "$WORK/across" <<'PY'
import os, sys
leaks = {0: [("all", [1048576])], 1: [("all", [2097152]), ("two", [262144])],
         2: [("all", [1572864, 1572864]), ("two", [262144])], 3: [("all", [1572864]), ("one", [8388608])]}
for rank, blocks in leaks.items():
    os.makedirs(os.path.join(sys.argv[1], "rank%d" % rank))
    with open(os.path.join(sys.argv[1], "rank%d" % rank, "dump.csv"), "w") as f:
        f.write("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
                "Call Stack(Python),Call Stack(C)\n")
        i = 0
        for stack, sizes in blocks:
            for size in sizes:
                i += 1
                ptr = 0x12c040000000 + i * 0x1000000
                py = "model.py(7): %s\ntrain.py(9): step" % stack
                c = "/usr/lib/libtorch_npu.so(_ZN2at6native9empty_npuEv+0x%x) [0x7f%08x]" % (rank * 16 + 1, rank * 4096 + i)
                f.write('%d,MALLOC,PTA,N/A,%d,%d,%d,%d,0x%016x,"{allocation_id:%d,addr:0x%016x,size:%d}","%s","%s"\n'
                        % (i, 1764753080000000000 + i * 1000, 100 + rank, 100 + rank, rank, ptr, i, ptr, size, py, c))
PY
A="$WORK/across"
expect_status 0 "$L" -q "$A"/rank0/dump.csv "$A"/rank1/dump.csv "$A"/rank2/dump.csv "$A"/rank3/dump.csv
sed -n '/^Across 4 inputs$/,/^$/p' "$WORK/out" >"$WORK/across.txt"
cat >"$WORK/across.want" <<'TXT'
Across 4 inputs
Unreleased at exit: 8 blocks in 3 groups by stack, PTA 16.0 MiB
#1 PTA 8.00 MiB in 1 block, in 1 of 4 inputs: rank3/dump.csv
   py model.py(7): one
   py train.py(9): step
   c  at::native::empty_npu() (libtorch_npu.so)
#2 PTA 7.50 MiB in 5 blocks, in 4 of 4 inputs: most in rank2/dump.csv 3.00 MiB, least in rank0/dump.csv 1.00 MiB
   py model.py(7): all
   py train.py(9): step
   c  at::native::empty_npu() (libtorch_npu.so)
#3 PTA 512 KiB in 2 blocks, in 2 of 4 inputs, 256 KiB each
   py model.py(7): two
   py train.py(9): step
   c  at::native::empty_npu() (libtorch_npu.so)

TXT
expect_same "$WORK/across.txt" "$WORK/across.want"
# after every input's section, before the summary; each input's own groups stay
if [ "$(grep -o -e '^==> ' -e '^Across ' -e '^summary ' "$WORK/out" | tr -d ' ' | tr '\n' ' ')" = "==> ==> ==> ==> Across summary " ] &&
	[ "$(grep -c '^#1 ' "$WORK/out")" -eq 5 ]; then ok; else bad "across: section order: $(cat "$WORK/out")"; fi
# --top: the same N for the section, the rest in one line
expect_status 0 "$L" -q --top 2 "$A"/rank*/dump.csv
if [ "$(sed -n '/^Across/,$p' "$WORK/out" | grep -c '^#')" -eq 2 ] &&
	sed -n '/^Across/,$p' "$WORK/out" | grep -q '^\.\.\. 1 more group: 2 blocks, PTA 512 KiB$'; then ok; else bad "across --top 2: $(cat "$WORK/out")"; fi
# one input with leaks: no section; nor in the reference's lines
expect_status 0 "$L" -q "$A"/rank3/dump.csv "$WORK/quiet1.csv"
if ! grep -q '^Across' "$WORK/out"; then ok; else bad "across with one input with leaks"; fi
expect_status 0 "$L" -q --format reference "$A"/rank*/dump.csv
if ! grep -q 'Across' "$WORK/out"; then ok; else bad "across in the reference's lines"; fi
# JSON: the groups across inputs and each input's summary, against a computation of our own
expect_status 0 "$L" -q --format json "$A"/rank*/dump.csv
if python3 - "$WORK/out" "$A" <<'PY'
import csv, json, re, sys
d = json.load(open(sys.argv[1]))
names = ["%s/rank%d/dump.csv" % (sys.argv[2], r) for r in range(4)]
mine, per = {}, {n: {} for n in names}
for n in names:
    for row in csv.DictReader(open(n)):
        size = int(re.search(r"size:(\d+)", row["Attr"]).group(1))
        stack = row["Call Stack(Python)"]
        mine.setdefault(stack, {}).setdefault(n, [0, 0])
        mine[stack][n][0] += 1
        mine[stack][n][1] += size
        p = per[n].setdefault(row["Event Type"], [0, 0])
        p[0] += 1
        p[1] += size
want = sorted(mine.items(), key=lambda kv: -sum(b for _, b in kv[1].values()))
got = d["across"]
assert len(got) == len(want) == 3, got
for rank, (a, (stack, ins)) in enumerate(zip(got, want), 1):
    assert a["kind"] == "exit" and a["pool"] == "PTA" and a["rank"] == rank, a
    assert a["stack"]["python"] == stack.split("\n"), a
    assert a["inputs"] == len(ins) and a["count"] == sum(c for c, _ in ins.values()), a
    assert a["bytes"] == sum(b for _, b in ins.values()), a
    order = sorted(ins, key=names.index)
    assert [(x["input"], x["count"], x["bytes"]) for x in a["per_input"]] == [(n, ins[n][0], ins[n][1]) for n in order], a
    lo = min(order, key=lambda n: ins[n][1])
    hi = max(order, key=lambda n: ins[n][1])
    assert a["min"] == {"input": lo, "bytes": ins[lo][1]} and a["max"] == {"input": hi, "bytes": ins[hi][1]}, a
    # each input's part is its entry of "groups"
    for x in a["per_input"]:
        g = d["groups"][x["group"] - 1]
        assert (g["input"], g["bytes"], g["count"]) == (x["input"], x["bytes"], x["count"]), (g, x)
assert got[1]["max"]["bytes"] == 3 * got[1]["min"]["bytes"] and got[1]["max"]["input"].endswith("rank2/dump.csv")
s = d["summary"]["inputs"]
assert [x["input"] for x in s] == names
for x in s:
    n = sum(c for c, _ in per[x["input"]].values())
    assert x["step"]["leaks"] == 0 and x["mark"] is None and x["events"] == n, x
    assert x["exit"]["leaks"] == n and x["exit"]["bytes"] == sum(b for _, b in per[x["input"]].values()), x
    assert x["exit"]["pools"] == [{"pool": p, "leaks": c, "bytes": b} for p, (c, b) in sorted(per[x["input"]].items())], x
    assert x["exit"]["pools_nested"] is False
PY
then ok; else bad "json across and inputs"; fi
# --top 1: the largest across group; its input's part is that input's #1, listed in "groups"
expect_status 0 "$L" -q --format json --top 1 "$A"/rank*/dump.csv
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [a["rank"] for a in d["across"]] == [1], d["across"]
assert [x["group"] is not None for x in d["across"][0]["per_input"]] == [True]
assert len(d["groups"]) == 4 and len(d["summary"]["inputs"]) == 4' "$WORK/out"; then ok; else bad "json across --top 1"; fi
# nested pools: HAL in one input and PTA in another are two memories (summed); only an input
# with both is not summed
awk -F, '$3 != "HAL"' "$T/baseline.csv" >"$WORK/p1.csv"
awk -F, '$3 != "PTA"' "$T/baseline.csv" >"$WORK/b.csv"
expect_status 0 "$L" "$WORK/p1.csv" "$WORK/b.csv"
if ! grep -q 'not summed' "$WORK/out" "$WORK/err" &&
	grep -q '^summary of 2 inputs: step leaks: not checked in any of the 2 inputs (no steps: .*); unreleased at exit 7 in 2 inputs (6.69 MiB: PTA 3.00 KiB in 4 blocks, HAL 6.69 MiB in 3 blocks); ' "$WORK/out" &&
	sed -n '/^Across 2 inputs$/,$p' "$WORK/out" | grep -q '^Unreleased at exit: 7 blocks in 7 groups by op (no call stacks), 6.69 MiB: PTA 3.00 KiB in 4 blocks, HAL 6.69 MiB in 3 blocks$' &&
	grep -q '^memscope-leaks: .* 7 unreleased at exit (6.69 MiB: PTA 3.00 KiB in 4 blocks, HAL 6.69 MiB in 3 blocks), ' "$WORK/err"; then ok; else bad "pools of two inputs summed: $(cat "$WORK/out" "$WORK/err")"; fi
expect_status 0 "$L" -q "$WORK/p1.csv" "$T/baseline.csv"
if grep -q '^summary of 2 inputs: .*, not summed: PTA lies inside HAL); ' "$WORK/out" &&
	[ "$(grep -c 'not summed' "$WORK/out")" -eq 4 ]; then ok; else bad "nested input not flagged: $(cat "$WORK/out")"; fi
expect_status 0 "$L" -q --format json "$WORK/p1.csv" "$WORK/b.csv" "$T/baseline.csv"
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert [x["exit"]["pools_nested"] for x in d["summary"]["inputs"]] == [False, False, True]
assert d["summary"]["exit"]["pools_nested"] is True
assert [p["pool"] for p in d["summary"]["inputs"][1]["exit"]["pools"]] == ["HAL"]' "$WORK/out"; then ok; else bad "json pools_nested per input"; fi
expect_status 0 "$L" -q --format json "$WORK/p1.csv" "$WORK/b.csv"
if python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["exit"]["pools_nested"] is False' "$WORK/out"; then ok; else bad "json pools_nested of two inputs"; fi

# a big dump (20,000 leaks in 600 stacks of 60 frames, C frames at random addresses): the text report stays short, at
# most 40 lines per listed group, whatever the number of leaks
python3 - "$WORK/big.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,"
            "Call Stack(Python),Call Stack(C)\n")
    t = 1764753080000000000
    for i in range(20000):
        s = i % 600
        py = "\n".join("m%d.py(%d): f%d" % (s, k, k) for k in range(30))
        c = "\n".join("/l/libx.so(_ZN1x%d%sEv+0x%x) [0x7f%08x]"
                      % (len("f%d" % (s * 100 + k)), "f%d" % (s * 100 + k), i, i) for k in range(30))
        op = "aten.op%d" % (i % 50)
        f.write("%d,OP_LAUNCH,ATEN_START,%s,%d,7,7,0,N/A,,,\n" % (3 * i + 1, op, t + i * 1000))
        f.write('%d,MALLOC,PTA,N/A,%d,7,7,0,0x%016x,"{allocation_id:%d,addr:0x%016x,size:%d}","%s","%s"\n'
                % (3 * i + 2, t + i * 1000 + 1, 0x10000000 + i * 4096, i + 1, 0x10000000 + i * 4096,
                   512 + s, py, c))
        f.write("%d,OP_LAUNCH,ATEN_END,%s,%d,7,7,0,N/A,,,\n" % (3 * i + 3, op, t + i * 1000 + 2))
PY
expect_status 0 "$L" -q "$WORK/big.csv"
if [ "$(wc -l <"$WORK/out")" -le $((40 * 20 + 10)) ] && [ "$(grep -c '^#' "$WORK/out")" -eq 20 ] &&
	grep -q '^Unreleased at exit: 20000 blocks in 600 groups by stack, PTA ' "$WORK/out" &&
	grep -q '^\.\.\. 580 more groups: ' "$WORK/out" && grep -q '^   py \.\.\. ' "$WORK/out" &&
	[ "$(grep -c '^   c  _ZN1x' "$WORK/out")" -eq 0 ] && grep -q '^   c  x::f[0-9]*() (libx.so)$' "$WORK/out"; then ok; else bad "big dump: $(wc -l <"$WORK/out") lines"; fi
expect_status 0 "$L" -q --top 3 --group-by op "$WORK/big.csv"
if [ "$(wc -l <"$WORK/out")" -le $((40 * 3 + 10)) ] && [ "$(grep -c '^#' "$WORK/out")" -eq 3 ] &&
	grep -q '^Unreleased at exit: 20000 blocks in 50 groups by op, ' "$WORK/out" &&
	grep -q '^   stack of the first block (others differ)$' "$WORK/out"; then ok; else bad "big dump --top 3 --group-by op: $(cat "$WORK/out")"; fi

# hostile text: a frame with an escape sequence and a carriage return stays on its line
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	"1,MALLOC,PTA,N/A,10,1,1,0,0x10,\"{allocation_id:1,addr:0x10,size:64,owner:a$(printf '\033')[31mb}\",\"x.py(1): $(printf '\033')[2Jf$(printf '\r')g\"," >"$WORK/hostile.csv"
expect_status 0 "$L" -q "$WORK/hostile.csv"
if ! grep -q "$(printf '\033')" "$WORK/out" && ! grep -q "$(printf '\r')" "$WORK/out" && grep -q '^   py x.py(1): ?\[2Jf?g$' "$WORK/out"; then ok; else bad "control characters in the text report"; fi

# --fail-on-finding for pipelines, as in memscope-inefficient; --fail-on-leak, its older
# spelling, does the same byte for byte
expect_status 1 "$L" -q --fail-on-finding steps_mstx.csv
expect_alias 1 --fail-on-finding --fail-on-leak steps_mstx.csv
# step leaks asked for (--kinds step) on an input without steps were not checked: no pass, but
# status 3 and one line naming it (also with -q) and no report, as for an unreadable input (the
# JSON of a run without --fail-on-finding says per input whether each kind was checked). Without
# --kinds the default (all) does not fail, and the gate says what it did not check (also -q)
expect_status 3 "$L" -q --fail-on-finding --kinds step "$T/baseline.csv"
expect_err_line "^memscope-leaks: $T/baseline.csv: step leaks not checked \(no steps: neither mstx \"step start\" ranges, SYSTEM STEP rows nor ProfilerStep#N ops\)\$"
[ ! -s "$WORK/out" ] && ok || bad "a report written with status 3"
expect_alias 3 --fail-on-finding --fail-on-leak -q --kinds step --format json "$T/baseline.csv"
expect_status 3 "$L" -q --fail-on-finding --kinds exit,step --pool host "$T/baseline.csv"
expect_err_line ': step leaks not checked \(no steps: .*\)$'
expect_status 0 "$L" -q --fail-on-finding --pool host "$T/baseline.csv"
expect_err_line ': step leaks not checked \(no steps: .*\)$'
expect_status 0 "$L" -q --pool host "$T/baseline.csv"
[ ! -s "$WORK/err" ] && ok || bad "no steps without --fail-on-finding: said under -q"
# findings come first: status 1 when another input has leaks
expect_status 1 "$L" -q --fail-on-finding --kinds step steps_mstx.csv "$T/baseline.csv"
grep -q "^memscope-leaks: step leaks not checked in 1 of 2 inputs ($T/baseline.csv): no steps: " "$WORK/err" && ok || bad "no steps of 1 of 2 inputs: $(cat "$WORK/err")"
expect_status 0 "$L" -q --kinds step,exit --format json "$T/baseline.csv" steps_mstx.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
ins = json.load(open(sys.argv[1]))["summary"]["inputs"]
assert [(i["step"]["checked"], i["exit"]["checked"], i["mark"]) for i in ins] == [
    (False, True, None), (True, True, None)], ins
PY
then ok; else bad "json checked flags"; fi
# -o: written in one piece, never over an existing file or an input
expect_status 0 "$L" -q steps_mstx.csv -o "$WORK/report.txt"
expect_same "$WORK/report.txt" steps_mstx.txt
expect_status 2 "$L" -q steps_mstx.csv -o "$WORK/report.txt"
expect_status 0 "$L" -q -f steps_mstx.csv -o "$WORK/report.txt"
cp steps_mstx.csv "$WORK/in.csv"
expect_status 2 "$L" -q "$WORK/in.csv" -o "$WORK/in.csv"
expect_same "$WORK/in.csv" steps_mstx.csv

# bad input and bad usage: one line, a distinct status, no output file
expect_status 4 "$L" -q "$WORK/missing.csv" -o "$WORK/o1.txt"
expect_err_line 'missing\.csv'
expect_absent "$WORK/o1.txt"
printf 'a,b,c\n1,2,3\n' >"$WORK/wrong.csv"
expect_status 3 "$L" -q "$WORK/wrong.csv" -o "$WORK/o2.txt"
expect_err_line "wrong\.csv: not a capture file, .* or a memscope_dump CSV$"
expect_absent "$WORK/o2.txt"
sed 's/size:4096,total/size:40x6,total/' steps_mstx.csv >"$WORK/badrow.csv"
expect_status 3 "$L" -q "$WORK/badrow.csv" -o "$WORK/o3.txt"
expect_err_line 'badrow\.csv:8: invalid size'
expect_absent "$WORK/o3.txt"
head -c $(($(wc -c <"$WORK/steps_mstx.mscap") / 2)) "$WORK/steps_mstx.mscap" >"$WORK/cut.mscap"
expect_status 3 "$L" -q "$WORK/cut.mscap" -o "$WORK/o4.txt"
expect_err_line 'cut\.mscap.*truncated'
expect_absent "$WORK/o4.txt"
expect_status 2 "$L" --skip-steps 1x steps_mstx.csv
expect_status 2 "$L" --min-steps-alive 0 steps_mstx.csv
expect_status 2 "$L" --pool gpu steps_mstx.csv
expect_status 2 "$L" --format xml steps_mstx.csv
expect_err_line "^memscope-leaks: --format: expected text, json, csv or reference, got 'xml'$"
expect_status 2 "$L" --group-by line steps_mstx.csv
expect_err_line "^memscope-leaks: --group-by: expected stack, op or owner, got 'line'$"
expect_status 2 "$L" --top 2x steps_mstx.csv
expect_status 2 "$L" --top -1 steps_mstx.csv
expect_status 2 "$L" --format reference --top 5 steps_mstx.csv
expect_err_line '^memscope-leaks: --top: --format reference writes every leak, ungrouped$'
expect_status 2 "$L" --group-by op --format reference steps_mstx.csv
expect_err_line '^memscope-leaks: --group-by: --format reference writes every leak, ungrouped$'
# --help says every default
"$L" --help >"$WORK/help"
if grep -q 'default pta,atb,mindspore,cuda_caching, an Nsight export.s cuda and a recording.s host for step leaks, all for mark and exit' "$WORK/help" && ! grep -q 'see man page' "$WORK/help"; then ok; else bad "--help of --pool"; fi
expect_status 2 "$L" --kinds step,leak steps_mstx.csv
expect_err_line "^memscope-leaks: --kinds: expected step, mark and/or exit, got 'step,leak'$"
expect_status 2 "$L" --kinds mark steps_mstx.csv
expect_err_line '^memscope-leaks: --kinds mark needs --mark TEXT$'
expect_status 2 "$L"
# -o's ending gives the format when --format is not given; a contradiction is refused
expect_status 0 "$L" -q -f -o "$WORK/by_name.json" steps_mstx.csv
python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$WORK/by_name.json" && ok || bad "-o x.json: not JSON"
expect_status 0 "$L" -q -f -o "$WORK/by_name.csv" steps_mstx.csv
head -1 "$WORK/by_name.csv" | grep -q '^kind,' && ok || bad "-o x.csv: not CSV: $(head -1 "$WORK/by_name.csv")"
expect_status 0 "$L" -q -f --format reference -o "$WORK/by_name.txt" steps_mstx.csv
expect_status 2 "$L" -q -f --format csv -o "$WORK/by_name2.json" steps_mstx.csv
expect_err_line '^memscope-leaks: --format csv contradicts -o .*/by_name2.json \(json\)$'
expect_absent "$WORK/by_name2.json"
# profiler_steps.csv (as an Ascend profiler output converts): ProfilerStep#N ops are the steps,
# numbered as the profiler numbers them (#8 is step 8; --skip-steps 1 skips #7, the first), a
# MALLOC that names its op (aten::add) is grouped by it even inside another open op, an unnamed
# one by the thread's open op (aten::mul); no address: none printed
expect_status 0 "$L" -q --kinds step profiler_steps.csv
if grep -q '^Step leaks (allocated in step s after the first 1, alive at the end of step s + 1): 2 blocks' "$WORK/out" &&
	grep -q '^#1 PTA 1.00 MiB in 1 block, allocated in step 8$' "$WORK/out" &&
	grep -q '^   op aten::add$' "$WORK/out" && grep -q '^   op aten::mul$' "$WORK/out" &&
	grep -q '^   first profiler_steps.csv:6 at 2.200000 s (process 100, device 0)$' "$WORK/out"; then ok; else bad "ProfilerStep steps, named ops: $(cat "$WORK/out")"; fi
expect_status 0 "$L" -q --kinds step --format csv profiler_steps.csv
[ "$(cut -d, -f12,13 "$WORK/out" | sort -u | tr '\n' ' ')" = "8,9 alloc_step,detected_step " ] && ok || bad "profiler_steps.csv steps: $(cat "$WORK/out")"
expect_status 0 "$L" -q --kinds step --skip-steps 2 profiler_steps.csv
grep -q '^summary: step leaks 0 (0 B); ' "$WORK/out" && ok || bad "--skip-steps 2 judged step 8 (the second)"

# profiler_gaps.csv: ProfilerStep #50, #52, #55 (a #51 after #52 is ignored, and said; its
# rows stay in step 52), blocks 1 MiB each: 1 before the first step, 2 and 3 in #50 (3 freed
# after #52's end), 4, 5, 6 in #52 (5 freed in #55, 6 between #52 and #55), 7 in #52 after the
# ignored #51 start (freed after #55), 8 in #55. Step s + 1 of #52 is the first later step that
# has an end, #55: 4 and 7 are step leaks detected there. The fluctuation: #52 from 4 to 6 MiB
# used, #55 (the rows after #52's end with it) from 5 to 7 MiB
expect_status 0 "$L" -q profiler_gaps.csv
grep -q '^PTA on device 0: MinGap step 52, 66.67% (4.00 MiB of 6.00 MiB); MaxGap step 55, 71.43% (5.00 MiB of 7.00 MiB)$' "$WORK/out" &&
	grep -q '^#1 PTA 4.00 MiB in 4 blocks, allocated in steps 50, 52, 55$' "$WORK/out" && ok || bad "profiler_gaps.csv: $(cat "$WORK/out")"
expect_status 0 "$L" profiler_gaps.csv
grep -q '^memscope-leaks: profiler_gaps.csv: process 100: 1 ProfilerStep op(s) ignored: their number is not above the step before theirs$' "$WORK/err" && ok || bad "ignored ProfilerStep#51 not said: $(cat "$WORK/err")"
# leaks as (allocation_id, alloc_step, detected_step); block 1, before the first ProfilerStep, is
# in no step (null); --skip-steps counts steps, not numbers: 2 skips #50 and #52; with
# --min-steps-alive 2 a block of #50 must outlive #52's end (50 + 2), not #55's
for a in "" "--skip-steps 2" "--skip-steps 0 --min-steps-alive 2"; do
	# shellcheck disable=SC2086
	expect_status 0 "$L" -q --format json $a profiler_gaps.csv
	mv "$WORK/out" "$WORK/gaps$(echo "$a" | tr -d ' -')"
done
if python3 - "$WORK/gaps" "$WORK/gapsskipsteps2" "$WORK/gapsskipsteps0minstepsalive2" <<'PY'
import json, sys
def got(f, kind):
    return sorted((x["allocation_id"], x["alloc_step"], x["detected_step"])
                  for x in json.load(open(f))["leaks"] if x["kind"] == kind)
assert got(sys.argv[1], "step") == [(4, 52, 55), (7, 52, 55)], got(sys.argv[1], "step")
assert got(sys.argv[1], "exit") == [(1, None, None), (2, 50, None), (4, 52, None), (8, 55, None)]
assert got(sys.argv[2], "step") == []
assert got(sys.argv[3], "step") == [(2, 50, 52), (3, 50, 52), (4, 52, 55), (7, 52, 55)], got(sys.argv[3], "step")
f = json.load(open(sys.argv[1]))["fluctuation"][0]
assert [s["step"] for s in f["steps"]] == [52, 55], f
PY
then ok; else bad "profiler_gaps.csv leaks by number"; fi

# the real torch_npu sample: its one step is ProfilerStep#50, so step 50 in every report and
# option (memscope-export --step, the trace's step slice, the page's band)
E="$BIN/memscope-export"
PT="$T/msprof/torch_npu_level0_rank0_ascend_pt"
expect_status 0 "$L" -q --group-by op "$PT"
[ "$(grep -c ', allocated in step 50$' "$WORK/out")" -eq "$(grep -c '^#' "$WORK/out")" ] && ok || bad "sample: not step 50: $(head -3 "$WORK/out")"
expect_status 0 "$E" -q --step 50 -o "$WORK/s50.html" "$PT"
grep -q 'data-step="50"' "$WORK/s50.html" && ok || bad "sample: no band of step 50"
expect_status 0 "$E" -q --format chrome-trace --step 50 -o "$WORK/s50.json" "$PT"
expect_status 0 python3 -c 'import json, sys
s = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "step"]
sys.exit(0 if [(e["name"], e["args"]["step"]) for e in s] == [("step 50", 50)] else 1)' "$WORK/s50.json"
expect_status 3 "$E" -q --step 1 -o "$WORK/s1.html" "$PT"
expect_err_line "^memscope-export: $PT: no step 1: it has step 50\$"
expect_status 3 "$E" -q --format chrome-trace --step 51 -o "$WORK/s51.json" profiler_gaps.csv
expect_err_line '^memscope-export: profiler_gaps.csv: no step 51: it has steps 50, 52, 55$'
expect_status 3 "$BIN/memscope-compare" -q --step 53 --input profiler_steps.csv,profiler_gaps.csv -o "$WORK/c.csv"
expect_err_line '^memscope-compare: profiler_steps.csv: no step 53: it has steps 7 to 10$'
expect_status 3 "$BIN/memscope-compare" -q --step 8 --input profiler_steps.csv,profiler_gaps.csv -o "$WORK/c.csv"
expect_err_line '^memscope-compare: profiler_gaps.csv: no step 8: it has steps 50, 52, 55$'
expect_status 0 "$BIN/memscope-compare" -q --step 8 --input profiler_steps.csv,profiler_steps.csv -o "$WORK/c.csv"
grep -q '^OP_LAUNCH,aten::mul,0,' "$WORK/c.csv" && ok || bad "compare --step 8: $(cat "$WORK/c.csv")"

# an input without MALLOC or FREE rows (an Ascend profiler memory_record: samples only) has
# nothing to check: one line, also with -q; with --fail-on-finding status 3
MR="$PT/ASCEND_PROFILER_OUTPUT/memory_record.csv"
expect_status 0 "$L" -q "$MR"
expect_err_line "^memscope-leaks: $MR: no allocations or frees: nothing to check \(samples alone, like an Ascend profiler memory_record's, hold no blocks: give its operator_memory or the whole folder\)\$"
expect_status 3 "$L" -q --fail-on-finding --kinds exit "$MR"
expect_status 0 "$L" -q --format json "$MR" profiler_steps.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
ins = json.load(open(sys.argv[1]))["summary"]["inputs"]
assert [(i["step"]["checked"], i["exit"]["checked"]) for i in ins] == [(False, False), (True, True)], ins
PY
then ok; else bad "json checked flags of a memory_record"; fi

# issue 29: the first line is the answer (the biggest finding, what was not checked); a kind not
# checked is said not checked, never "0 (0 B)", in text and JSON
expect_status 0 "$L" -q "$T/baseline.csv"
if head -1 "$WORK/out" | grep -q '^7 blocks unreleased at exit (PTA 3.00 KiB in 4 blocks, HAL 6.69 MiB in 3 blocks, not summed: PTA lies inside HAL), the largest group .*; step leaks not checked (no steps)$' &&
	grep -q '^summary: step leaks: not checked (no steps: neither mstx "step start" ranges, SYSTEM STEP rows nor ProfilerStep#N ops); unreleased at exit 7 ' "$WORK/out" &&
	! grep -q 'step leaks 0' "$WORK/out"; then ok; else bad "steps not checked, text: $(head -1 "$WORK/out"; tail -1 "$WORK/out")"; fi
expect_status 0 "$L" -q --format json "$T/baseline.csv" steps_mstx.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
u = s["step"]["unchecked_inputs"]
assert len(u) == 1 and u[0]["input"].endswith("baseline.csv") and u[0]["why"].startswith("no steps: "), u
assert s["exit"]["unchecked_inputs"] == [] and s["exit"]["end"] == "exit", s["exit"]
a, b = s["inputs"]
assert a["step"]["checked"] is False and a["step"]["not_checked"].startswith("no steps"), a
assert b["step"]["checked"] is True and b["step"]["not_checked"] is None and b["end"] == "exit", b
PY
then ok; else bad "steps not checked, json"; fi

# a PyTorch snapshot with an oom entry (written by Python's own pickle): the out-of-memory event
# first, with the allocator's state then and who held the most (a block freed after it counted:
# the reader hands the oom entry on after the trace, the second pass sees it); the blocks held
# when the snapshot was taken are alive at its end, not unreleased at exit; the largest holder
# counts the caching allocator's blocks, not also the segment holding them (made at the same
# line: 24 MiB in 4 blocks before); the first line says the out-of-memory moment apart from the
# end state
python3 - "$WORK/oom.pickle" <<'PY'
import pickle, sys
T, A, MiB = 1738780408789613, 0x7F3A00000000, 1 << 20
fr = [{"filename": "train.py", "line": 3, "name": "forward"}]
blk = lambda a, n, st: {"address": a, "size": n, "requested_size": n, "state": st, "frames": fr}
seg = {"device": 0, "address": A, "total_size": 20 * MiB, "allocated_size": 3 * MiB,
       "active_size": 3 * MiB, "requested_size": 3 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [blk(A, 2 * MiB, "active_allocated"), blk(A + 2 * MiB, MiB, "active_allocated"),
                  blk(A + 3 * MiB, 17 * MiB, "inactive")]}
tr = [{"action": "segment_alloc", "addr": A, "size": 20 * MiB, "stream": 0, "time_us": T, "frames": fr},
      {"action": "alloc", "addr": A, "size": 2 * MiB, "stream": 0, "time_us": T + 10, "frames": fr},
      {"action": "alloc", "addr": A + 2 * MiB, "size": MiB, "stream": 0, "time_us": T + 20, "frames": fr},
      {"action": "alloc", "addr": A + 3 * MiB, "size": MiB, "stream": 0, "time_us": T + 25, "frames": fr},
      {"action": "oom", "device_free": 5 * MiB, "size": 4096 * MiB, "stream": 0, "time_us": T + 30, "frames": fr},
      {"action": "free_requested", "addr": A + 3 * MiB, "size": MiB, "stream": 0, "time_us": T + 40, "frames": fr},
      {"action": "free_completed", "addr": A + 3 * MiB, "size": MiB, "stream": 0, "time_us": T + 40, "frames": fr}]
pickle.dump({"segments": [seg], "device_traces": [tr]}, open(sys.argv[1], "wb"), protocol=4)
PY
expect_status 1 "$L" --fail-on-finding "$WORK/oom.pickle"
if head -1 "$WORK/out" | grep -q '^Out of memory on device 0 at 0\.000030 s: asked for 4\.00 GiB, device free 5\.00 MiB, reserved 20\.0 MiB, allocated 4\.00 MiB; the largest holder then 4\.00 MiB in 3 blocks, at train\.py(3): forward; apart from it, 3 blocks alive at the end of the snapshot (.*), the largest group CUDA_CACHING 3\.00 MiB in 2 blocks, at train\.py(3): forward; step leaks not checked (no steps)$' &&
	grep -q '^Out of memory: 1 event$' "$WORK/out" &&
	grep -q '^   alive then: CUDA 20\.0 MiB in 1 block, CUDA_CACHING 4\.00 MiB in 3 blocks, not summed: CUDA_CACHING lies inside CUDA$' "$WORK/out" &&
	grep -q '^   largest holder: 4\.00 MiB in 3 blocks, at train\.py(3): forward$' "$WORK/out" &&
	grep -q '^Alive at the end of the snapshot: 3 blocks ' "$WORK/out" && ! grep -qi 'at exit' "$WORK/out" &&
	grep -q '^summary: .*; alive at the end of the snapshot 3 (' "$WORK/out" &&
	grep -q '^memscope-leaks: 1 out-of-memory event(s), step leaks not checked, 3 alive at the end of the snapshot (' "$WORK/err"; then ok; else bad "snapshot oom: $(cat "$WORK/out" "$WORK/err")"; fi
expect_status 0 "$L" -q --format json "$WORK/oom.pickle"
if python3 - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
o, = d["ooms"]
assert (o["device"], o["requested"], o["device_free"], o["reserved"], o["allocated"]) == (
    "0", 4 << 30, 5 << 20, 20 << 20, 4 << 20), o
assert o["alive"]["pools"] == [{"pool": "CUDA", "blocks": 1, "bytes": 20 << 20},
                               {"pool": "CUDA_CACHING", "blocks": 3, "bytes": 4 << 20}], o
h = o["alive"]["largest_holder"]
assert h["bytes"] == 4 << 20 and h["blocks"] == 3 and h["stack"]["python"] == ["train.py(3): forward"], h
assert o["alive"]["partial"] is False
s = d["summary"]
assert s["exit"]["end"] == "snapshot" and s["exit"]["alive_at"] == "alive at the end of the snapshot"
assert s["inputs"][0]["end"] == "snapshot" and s["inputs"][0]["ooms"] == 1
PY
then ok; else bad "snapshot oom, json"; fi

# a snapshot's block alive before its trace starts (from its segments, before_trace) has no time
# nor op of its own: "allocated before the recorded history", and a snapshot names a record, not
# a line ("file.pickle record N", was "file.pickle:N at 0.000000 s" and "outside any op")
python3 - "$WORK/pre.pickle" <<'PY'
import pickle, sys
T, A, MiB = 1738780408789613, 0x7F3A00000000, 1 << 20
fr = [{"filename": "train.py", "line": 3, "name": "forward"}]
blk = lambda a, n, st, f: {"address": a, "size": n, "requested_size": n, "state": st, "frames": f}
seg = {"device": 0, "address": A, "total_size": 4 * MiB, "allocated_size": 3 * MiB,
       "active_size": 3 * MiB, "requested_size": 3 * MiB, "stream": 0, "segment_type": "large",
       "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
       "blocks": [blk(A, 2 * MiB, "active_allocated", []), blk(A + 2 * MiB, MiB, "active_allocated", fr),
                  blk(A + 3 * MiB, MiB, "inactive", [])]}
tr = [{"action": "alloc", "addr": A + 2 * MiB, "size": MiB, "stream": 0, "time_us": T + 20, "frames": fr},
      {"action": "op_start", "addr": 0, "size": 0, "stream": 0, "time_us": T + 21, "frames": []}][:1]
pickle.dump({"segments": [seg], "device_traces": [tr]}, open(sys.argv[1], "wb"), protocol=4)
PY
expect_status 0 "$L" -q --kinds exit "$WORK/pre.pickle"
if grep -q '^   allocated before the recorded history$' "$WORK/out" &&
	grep -q '^   first .*pre\.pickle record [0-9]* before the recorded history (device 0, 0x00007f3a00000000)$' "$WORK/out" &&
	grep -q '^   first .*pre\.pickle record [0-9]* at 0\.0000[0-9]* s (device 0, 0x00007f3a00200000)$' "$WORK/out" &&
	! grep -q 'pre\.pickle:[0-9]' "$WORK/out"; then ok; else bad "before the trace: $(cat "$WORK/out")"; fi

# a step check that could not run for want of steps is no 0: the profiler folder has one step
# (ProfilerStep#50), skipped by --skip-steps 1, and with --skip-steps 0 no later step to be alive
# at; --fail-on-finding fails as for no steps (exit 3). The stderr summary names only the kinds
# asked for, never "0 marked-range leak(s)" without --mark
expect_status 3 "$L" --kinds step --fail-on-finding "$T/msprof/torch_npu_level0_rank0_ascend_pt"
if grep -q '^memscope-leaks: .*torch_npu_level0_rank0_ascend_pt: step leaks not checked (1 step: a step leak needs 3 (--skip-steps 1, then a step and one ended --min-steps-alive 1 later))$' "$WORK/err" &&
	! grep -q 'step leaks 0' "$WORK/out" "$WORK/err"; then ok; else bad "one step: $(cat "$WORK/out" "$WORK/err")"; fi
expect_status 0 "$L" --kinds step --skip-steps 0 "$T/msprof/torch_npu_level0_rank0_ascend_pt"
if grep -q 'step leaks not checked (1 step: a step leak needs 2 (--skip-steps 0, ' "$WORK/err" &&
	grep -q '^summary: step leaks: not checked (too few steps: ' "$WORK/out" &&
	grep -q '^memscope-leaks: step leaks not checked, from [0-9]* events$' "$WORK/err"; then ok; else bad "one step, skip 0: $(cat "$WORK/out" "$WORK/err")"; fi
expect_status 0 "$L" steps_mstx.csv
if tail -1 "$WORK/err" | grep -q '^memscope-leaks: [0-9]* step leak(s), [0-9]* unreleased at exit (.*), from [0-9]* events$'; then ok; else bad "no mark, stderr: $(cat "$WORK/err")"; fi
# FREE rows without a MALLOC in two inputs: the count says it is over both
expect_status 0 "$L" -q --kinds exit "$T/memscope_dump_20250428113810.csv" "$T/memscope_dump_20250428113811.csv"
if grep -q '^memscope-leaks: .*memscope_dump_20250428113810\.csv:261: FREE with no live MALLOC (.*); 14 such row(s) in 2 inputs, counted and skipped$' "$WORK/err"; then ok; else bad "unmatched frees of 2 inputs: $(cat "$WORK/err")"; fi

# msMemScope's OOM_TRIGGER row (its req_size), written after a FREE of a later time: the second
# pass counts the block that FREE ends as alive then
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,MALLOC,PTA,N/A,100,7,7,0,0x10,"{allocation_id:1,addr:0x10,size:1048576,owner:PTA@model@weight}",,' \
	'2,MALLOC,PTA,N/A,200,7,7,0,0x20,"{allocation_id:2,addr:0x20,size:2048}",,' \
	'3,FREE,PTA,N/A,300,7,7,0,0x20,"{allocation_id:2,addr:0x20,size:-2048}",,' \
	'4,OOM_DETAIL,OOM_TRIGGER,OOM_Trigger,250,7,7,0,N/A,"{func:halMemAlloc,req_size:8589934592,flag:0}",,' >"$WORK/oom.csv"
expect_status 0 "$L" -q "$WORK/oom.csv"
if head -1 "$WORK/out" | grep -q '^Out of memory on device 0 at 0\.000000 s (process 7): asked for 8\.00 GiB; the largest holder then 1\.00 MiB in 1 block, owner PTA@model@weight; apart from it, 1 block unreleased at exit (PTA 1\.00 MiB); ' &&
	grep -q '^   alive then: PTA 1\.00 MiB$' "$WORK/out" &&
	grep -q '^   largest holder: 1\.00 MiB in 1 block, owner PTA@model@weight$' "$WORK/out"; then ok; else bad "dump oom: $(cat "$WORK/out")"; fi
expect_status 0 "$L" --format json "$WORK/oom.csv"
python3 -c 'import json, sys; a = json.load(open(sys.argv[1]))["ooms"][0]["alive"]; assert a["pools"] == [{"pool": "PTA", "blocks": 2, "bytes": 1050624}] and not a["partial"], a' "$WORK/out" &&
	grep -q '^memscope-leaks: .*oom\.csv:5: out-of-memory row after rows later than it; reading again$' "$WORK/err" && ok || bad "dump oom, json: $(cat "$WORK/err")"

# an Ascend profiler folder ends with its profile; a capture cut short (read with --lenient) is a
# recording stopped before its program ended
expect_status 0 "$L" -q --kinds exit --format json "$T/msprof/torch_npu_level0_rank0_ascend_pt"
python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))["summary"]; assert s["exit"]["end"] == "profile" and s["exit"]["leaks"] > 0, s["exit"]' "$WORK/out" && ok || bad "profile end, json"
"$BIN/memscope-convert" -q steps_mstx.csv -o "$WORK/cut.mscap"
head -c $(($(wc -c <"$WORK/cut.mscap") - 4)) "$WORK/cut.mscap" >"$WORK/cut2.mscap"
expect_status 0 "$L" -q --lenient --kinds exit "$WORK/cut2.mscap"
if grep -q '^Alive when the recording stopped: ' "$WORK/out" && grep -q '^summary: alive when the recording stopped [0-9]' "$WORK/out"; then ok; else bad "cut capture: $(cat "$WORK/out")"; fi
finish
