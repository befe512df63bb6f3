#!/bin/sh
# memscope-batch's gates say what they could not check, and its report speaks the user's words
# (issues 29 and 35): --fail-on-leak on inputs without steps names them (stderr, JSON, text) and
# gates the blocks alive at the end too; step leaks not checked are unknown, not 0; a row's pid,
# rank and node; what stands out is a memory figure; a ratio to a median of 0; byte figures past
# what a figure holds say they overflowed in text, JSON and CSV, as memscope-leaks says it, and
# still merge from shards byte for byte; -q with -o leaves standard output empty. Args: BIN_DIR
# SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
B="$BIN/memscope-batch"
T="$SRC/testdata"
cd "$WORK" || exit 1
H='ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)'

# 1. no steps: step leaks are not checked, said on stderr (also with -q), in JSON and in text;
# --fail-on-leak gates the blocks alive at the end too (exit 1: baseline.csv has some)
cp "$T/baseline.csv" nosteps.csv
expect_status 1 "$B" -q --fail-on-leak nosteps.csv
expect_err_line '^memscope-batch: step leaks not checked in 1 of 1 input read \(no steps\): #0 \(nosteps\.csv\)$'
if grep -q '^1 input with step or exit leaks:$' "$WORK/out" &&
	grep -q '^1 input where step leaks could not be checked:$' "$WORK/out" &&
	grep -q '^  #0 device 0 pid 3101864 (nosteps\.csv): step leaks: no steps: neither mstx ' "$WORK/out" &&
	! grep -q 'inputs with step leaks' "$WORK/out"; then ok; else bad "no steps, text: $(cat "$WORK/out")"; fi
expect_status 1 "$B" -q --fail-on-leak --format json nosteps.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
rec, s = lines[0], lines[-1]
assert rec["step_leaks"] is None and rec["step_leak_bytes"] is None, rec
assert rec["not_checked"].startswith("step leaks: no steps: "), rec
assert rec["exit_leaks"] == 4 and rec["pid"] == 3101864, rec
assert (s["unchecked"], s["unchecked_inputs"], s["leaking_inputs"]) == (1, [0], [0]), s
PY
then ok; else bad "no steps, json"; fi
# a gate on step leaks alone, on inputs where none could be checked, is no pass: exit 3
expect_status 3 "$B" -q --fail-on-leak --kinds step nosteps.csv
expect_err_line '^memscope-batch: step leaks not checked in 1 of 1 input read \(no steps\): '
# an input without allocations or frees: nothing to check, whatever --kinds
head -2 "$T/baseline.csv" >noblocks.csv
expect_status 3 "$B" -q --fail-on-leak noblocks.csv
expect_err_line '^memscope-batch: step or exit leaks not checked in 1 of 1 input read \(no allocations or frees\): #0 \(noblocks\.csv\)$'

# 2. the text in the user's words: pid, rank and node of each row, no JSON key names, stand out
# by memory figures only, and a ratio to a median of 0 said as such
mkdir -p rank3 rank4
printf '%s\n' "$H" '1,MALLOC,PTA,N/A,100,7,7,0,0x10,"{allocation_id:1,addr:0x10,size:4096}",,' \
	'2,FREE,PTA,N/A,200,7,7,0,0x10,"{allocation_id:1,addr:0x10,size:-4096}",,' >rank3/clean.csv
cp rank3/clean.csv rank4/clean.csv
cp -R "$T/msprof/torch_npu_level0_rank0_ascend_pt" node7.lab_4242_20250101000000000_ascend_pt
expect_status 0 "$B" -q nosteps.csv rank3 rank4 node7.lab_4242_20250101000000000_ascend_pt
if grep -q '^   #.*PID NODE .*TIME SPAN ' "$WORK/out" &&
	grep -Eq '^ +2 +3 +0 +7 - ' "$WORK/out" &&
	grep -Eq '^ +0 +0 +0 +[0-9]+ node7\.lab ' "$WORK/out" &&
	! grep -Eq 'span_ns|step_leak_bytes|exit_leak_bytes|peak_bytes|^  bytes ' "$WORK/out" &&
	grep -q '^  file size ' "$WORK/out" &&
	grep -q '^stand out (by peak, growth per step, step leaks and memory alive at the end):$' "$WORK/out" &&
	! sed -n '/^stand out/,/^$/p' "$WORK/out" | grep -Eq '^  (file size|events|time span|allocations):'; then ok; else bad "text words: $(cat "$WORK/out")"; fi
# the first line an answer; memory alive at a profile's end is no exit leak, and said so
if head -1 "$WORK/out" | grep -Eq '^1 of 4 inputs read leak at exit \(largest: #[0-9]+ nosteps\.csv, 3\.00 KiB\); 1 holds memory at the end of a snapshot, profile or stopped recording \(not a leak by itself\); 4 could not be step-checked' &&
	grep -q '^ *(AT END: alive at the end of the profile, not a leak by itself)$' "$WORK/out" &&
	grep -q '^   #.* STEP LEAKS  *AT END ' "$WORK/out" && grep -q "HAL blocks not counted where" "$WORK/out"; then ok; else bad "first line, profile end: $(head -12 "$WORK/out")"; fi
expect_status 0 "$B" -q nosteps.csv rank3 rank4
if grep -Eq '^  alive at end +0 B \(#1\) +0 B +3\.00 KiB \(#0\) +3\.00 KiB vs 0$' "$WORK/out" &&
	grep -q '^  alive at end: above 0 on 1 of 3 inputs (median 0 B)$' "$WORK/out"; then ok; else bad "median 0: $(cat "$WORK/out")"; fi
expect_status 0 "$B" -q --format json node7.lab_4242_20250101000000000_ascend_pt
python3 -c 'import json, sys; r = json.loads(open(sys.argv[1]).readline()); assert r["node"] == "node7.lab", r' "$WORK/out" && ok || bad "node, json"

# 3. a database whose leaked sizes sum past 2^64: memscope-leaks says its total overflowed, and so
# does memscope-batch, in text, JSON and CSV, whose parts still merge byte for byte
{
	echo "$H"
	for i in 1 2 3; do
		echo "$i,MALLOC,PTA,N/A,${i}00,7,7,0,0x$i,\"{allocation_id:$i,addr:0x$i,size:7000000000000000000}\",,"
	done
} >huge.csv
"$BIN/memscope-db" -q -o huge.db huge.csv || bad "memscope-db huge.csv"
expect_status 0 "$BIN/memscope-leaks" -q --format json huge.db
python3 -c 'import json, sys; e = json.load(open(sys.argv[1]))["summary"]["exit"]; assert e.get("bytes_overflowed") is True, e' "$WORK/out" && ok || bad "leaks: no overflow"
expect_status 0 "$B" -q huge.db nosteps.csv
if grep -q ' 3 (more than 8\.00 EiB (the total overflowed)) .* huge\.db$' "$WORK/out" &&
	grep -q '^  alive at end .*more than 8\.00 EiB (the total overflowed) (#0)' "$WORK/out"; then ok; else bad "overflow, text: $(cat "$WORK/out")"; fi
expect_status 0 "$B" -q --format json -o all.json huge.db nosteps.csv
expect_status 0 "$B" -q --format csv -o all.csv huge.db nosteps.csv
if python3 - all.json all.csv <<'PY'
import csv, json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
rec = lines[0]
assert rec["exit_leak_bytes"] == 2**63 - 1 and rec["exit_leak_bytes_overflowed"] is True, rec
assert "exit_leak_bytes_overflowed" not in lines[1], lines[1]
across = [l for l in lines if l["type"] == "across" and l["figure"] == "exit_leak_bytes"][0]
assert across["max_overflowed"] is True and "min_overflowed" not in across, across
rows = list(csv.reader(open(sys.argv[2])))
assert rows[0][-2:] == ["stands_out", "overflowed"], rows[0]
assert rows[1][-1] == "exit_leak_bytes;peak_bytes;peak_owner_bytes" and rows[2][-1] == "", rows[1:3]
assert [r for r in rows if r[0] == "max"][0][-1] == "peak_bytes;exit_leak_bytes"
assert [r for r in rows if r[0] == "imbalance"][0][rows[0].index("exit_leak_bytes")] == ""
PY
then ok; else bad "overflow, json and csv"; fi
expect_status 0 "$B" -q --shard 0/2 -o p0 huge.db nosteps.csv
expect_status 0 "$B" -q --shard 1/2 -o p1 huge.db nosteps.csv
expect_status 0 "$B" -q --merge --format json p1 p0
expect_same "$WORK/out" all.json
expect_status 0 "$B" -q --merge --format csv p0 p1
expect_same "$WORK/out" all.csv

# 4. -q with an output file: nothing on standard output (both tools that take -q)
expect_status 1 "$B" -q --fail-on-leak -o gate.txt nosteps.csv
[ ! -s "$WORK/out" ] && [ -s gate.txt ] && ok || bad "batch -q -o: $(cat "$WORK/out")"
expect_status 0 "$BIN/memscope-leaks" -q -o leaks.txt nosteps.csv
[ ! -s "$WORK/out" ] && [ ! -s "$WORK/err" ] && [ -s leaks.txt ] && ok || bad "leaks -q -o: $(cat "$WORK/out" "$WORK/err")"
finish
