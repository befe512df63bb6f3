#!/bin/sh
# Golden CLI cases of memscope-leaks: each rule's edges on hand-built dumps, the report formats,
# the second pass, and bad input. Args: BIN_DIR SRC_DIR
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
# --pool; the gap analysis; unreleased at exit grouped by owner, stack and pool
expect_out steps_mstx.txt steps_mstx.csv
expect_out steps_mstx_hal.txt --kinds step --pool hal,pta steps_mstx.csv
expect_out steps_mstx_skip0.txt --kinds step --skip-steps 0 steps_mstx.csv
expect_out steps_mstx_alive2.txt --kinds step --min-steps-alive 2 steps_mstx.csv
expect_out steps_mstx_leaks.csv --format csv steps_mstx.csv
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
assert step[1]["stack"]["python"] == ["train.py(12): step", "model.py(40): forward"]
s = d["summary"]
assert s["step"]["leaks"] == 3 and s["step"]["bytes"] == sum(x["size"] for x in step)
assert s["exit"]["bytes"] == sum(x["size"] for x in exit_) == 5251072
assert sum(g["count"] for g in s["exit"]["groups"]) == len(exit_) == 4
assert s["exit"]["groups"][1]["owner"] == "CANN@RUNTIME"
assert s["unmatched_frees"] == 2 and s["mark"] is None
f = d["fluctuation"][0]
assert (f["pool"], f["min_gap"]["step"], f["max_gap"]["step"]) == ("PTA", 2, 3)
assert f["min_gap"]["min"] == 4194304 and f["min_gap"]["max"] == 7348224
PY
then ok; else bad "json report of steps_mstx.csv"; fi

# SYSTEM STEP rows: step n ends at STEP row n; the stray mstx "step start" row is ignored
expect_out steps_system.txt steps_system.csv
expect_out steps_system_skip0.txt --kinds step --skip-steps 0 steps_system.csv
expect_status 0 "$L" steps_system.csv
if grep -q 'process 200: 1 mstx "step start" row(s) ignored' "$WORK/err"; then ok; else bad "ignored step rows not reported"; fi
# a STEP row written after a later FREE row: a second pass gives the in-order file's answer
expect_status 0 "$L" -q late.csv
sed 's/late\.csv/steps_system.csv/' "$WORK/out" >"$WORK/late.txt"
expect_same "$WORK/late.txt" steps_system.txt
expect_status 3 "$L" -q - <late.csv
expect_err_line '^memscope-leaks: -:7: step or mark row out of time order: a second pass is needed, and standard input cannot be read twice: save it to a file$'
# a user's own range written late does not force a second pass: only step starts and ends do
awk 'NR==7{print "13,MSTX,Range_start,\"dataloader\",1764753080000011500,200,209,1,N/A,,,"} {print}' steps_system.csv >"$WORK/user_late.csv"
expect_status 0 "$L" -q - <"$WORK/user_late.csv"
grep -v '^#' "$WORK/out" >"$WORK/user_late.txt"
grep -v '^#' steps_system.txt >"$WORK/system.txt"
expect_same "$WORK/user_late.txt" "$WORK/system.txt"

# the marked range on a legacy two-process file with repeating IDs and HAL FREE rows on device
# N/A: Y (allocated between A and B, freed after C) and W leak; X, freed before C, does not
# (the reference drops the N/A rows and reports X too)
expect_out mark_legacy.txt --mark iter mark_legacy.csv
expect_status 0 "$L" -q --mark iter --start-index 1 --kinds mark --pool hal mark_legacy.csv
if grep -q '^No hal memory leaks detected on device 1\.$' "$WORK/out" && ! grep -q 'device 0' "$WORK/out"; then ok; else bad "--start-index 1: $(cat "$WORK/out")"; fi
expect_status 3 "$L" -q --mark nothing mark_legacy.csv
expect_err_line "^memscope-leaks: no device has 3 Mark rows 'nothing' \(from index 0; the most any has is 0\)$"

# the reference's sample: its 3 HAL and 4 PTA MALLOCs without FREE are unreleased at exit
expect_status 0 "$L" -q --format csv "$T/baseline.csv"
if [ "$(grep -c '^exit,.*,HAL,' "$WORK/out")" -eq 3 ] && [ "$(grep -c '^exit,.*,PTA,' "$WORK/out")" -eq 4 ]; then ok; else bad "baseline.csv exit leaks"; fi

# a capture file gives the same report as the dump it came from (positions are record numbers)
"$BIN/memscope-convert" -q steps_mstx.csv -o "$WORK/steps_mstx.mscap"
expect_status 0 "$L" -q "$WORK/steps_mstx.mscap"
grep -v '^#' "$WORK/out" >"$WORK/cap.txt"
grep -v '^#' steps_mstx.txt >"$WORK/csv.txt"
expect_same "$WORK/cap.txt" "$WORK/csv.txt"
# several inputs: one section each, then the exit groups of all
expect_status 0 "$L" -q --kinds step steps_mstx.csv steps_system.csv
if [ "$(grep -c '^==> ' "$WORK/out")" -eq 2 ] && grep -q '^summary: step leaks 4 ' "$WORK/out"; then ok; else bad "two inputs: $(cat "$WORK/out")"; fi

# --fail-on-finding for pipelines, as in memscope-inefficient; --fail-on-leak, its older
# spelling, does the same byte for byte
expect_status 1 "$L" -q --fail-on-finding steps_mstx.csv
expect_status 0 "$L" -q --fail-on-finding --kinds step "$T/baseline.csv"
expect_alias 1 --fail-on-finding --fail-on-leak steps_mstx.csv
expect_alias 0 --fail-on-finding --fail-on-leak -q --kinds step --format json "$T/baseline.csv"
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
expect_err_line "^memscope-leaks: --format: expected text, json or csv, got 'xml'$"
expect_status 2 "$L" --kinds step,leak steps_mstx.csv
expect_err_line "^memscope-leaks: --kinds: expected step, mark and/or exit, got 'step,leak'$"
expect_status 2 "$L" --kinds mark steps_mstx.csv
expect_err_line '^memscope-leaks: --kinds mark needs --mark TEXT$'
expect_status 2 "$L"
finish
