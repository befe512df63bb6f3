#!/bin/sh
# Golden CLI cases of the Ascend profiler inputs: every sample and quirk folder against the
# independent reading of check_msprof.py, the Excel-damaged file, slices, exports, notes and bad
# rows through the tools. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
C="$BIN/memscope-convert"
L="$BIN/memscope-leaks"
T="$SRC/testdata/msprof"
Q="$SRC/testdata/msprof-quirks"
PROF="$Q/PROF_000001_20260605161708478_FRJKORBPFMHQMGLA"
cd "$WORK" || exit 1

# oracle DIR [--lenient]: the figures of memscope-convert and memscope-leaks equal the oracle's
oracle() {
	if python3 "$SRC/tests/cli/check_msprof.py" "$BIN" "$WORK" "$@" >"$WORK/oracle.out" 2>&1; then
		ok
		grep -v '^check_msprof:' "$WORK/oracle.out"
	else
		bad "oracle $*: $(grep -E 'FAIL|Error|error' "$WORK/oracle.out" | head -5)"
	fi
}

# 1. the real samples: counts, byte sums and times of every event kind and pool equal those of the
# CSVs, exit leaks too; level0's APP/Memory counters equal memory_record's APP rows (§5.4)
oracle "$T/torch_npu_level0_rank0_ascend_pt"
grep -q '^torch_npu_level0_rank0_ascend_pt: 13 APP/Memory counters equal' "$WORK/oracle.out" && ok ||
	bad "level0: not 13 APP/Memory counters matched"
oracle "$T/torch_npu_st_level2_rank_0_ascend_pt"
oracle "$T/insight_test_rank_0"
# the hand-built quirks (testdata/msprof-quirks/README.txt)
oracle "$Q/crlf_lf_rank0_ascend_pt"
oracle "$PROF"
oracle "$Q/rank0_ascend_ms"
oracle --lenient "$Q/bad_fields"

# 2. the Excel-damaged memory_record: one line naming file, line and column; nothing written
expect_status 3 "$C" -o rank1.csv "$T/insight_test_rank_1"
expect_err_line '^memscope-convert: .*/insight_test_rank_1/ASCEND_PROFILER_OUTPUT/memory_record\.csv:2: column 2 "Timestamp\(us\)": "1\.69512E\+15" is in exponent notation'
expect_absent rank1.csv
expect_status 3 "$L" "$T/insight_test_rank_1/ASCEND_PROFILER_OUTPUT/memory_record.csv"
expect_err_line '^memscope-leaks: .*memory_record\.csv:2: column 2 "Timestamp\(us\)"'
# ... read with --lenient, saying how many rows were skipped; the oracle agrees on the rest
expect_status 0 "$C" --lenient -o rank1.csv "$T/insight_test_rank_1"
grep -q 'skipped 30 bad rows (first: .*memory_record\.csv:2: column 2 "Timestamp(us)"' "$WORK/err" && ok ||
	bad "lenient: no note of the 30 skipped rows: $(cat "$WORK/err")"
oracle --lenient "$T/insight_test_rank_1"
# a folder without memory files: one clear line
expect_status 3 "$C" -o kp.csv "$T/insight_test_kernel_parse"
expect_err_line '^memscope-convert: .*/insight_test_kernel_parse: no profiler memory files in the folder'
expect_absent kp.csv

# 3. slices merged in slice order, the older export left out with a note naming what is read
expect_status 0 "$C" -o prof.csv "$PROF"
grep -q '^memscope-convert: .*: 1 operator_memory file of other exports left out: reading operator_memory_slice_0_20260605162010\.csv and its slices (the newest, as msprof does)$' "$WORK/err" &&
	ok || bad "no note of the older operator_memory export: $(cat "$WORK/err")"
grep -q 'memory_record file of other exports left out: reading memory_record_20260605162010\.csv ' "$WORK/err" &&
	ok || bad "no note of the older memory_record export: $(cat "$WORK/err")"
names=$(awk -F, '$2 == "MALLOC" { printf "%s ", $4 }' prof.csv)
[ "$names" = "Graph_88 trans_TransData_0 Graph_1 slice1_first slice1_kept " ] && ok ||
	bad "slices: MALLOC order '$names'"
grep -q 'old_export' prof.csv && bad "the older export was read" || ok
# msprof's own operator_memory: released at allocation + duration; Duration 0 with zero release
# totals is not a release; Device_id host
grep -q '^2,FREE,GE,N/A,1780647428000115970,N/A,N/A,0,N/A,"{allocation_id:1,size:65536,total:2097152,used:0}",,$' prof.csv &&
	ok || bad "msprof operator_memory: Graph_88's FREE"
grep -q ',FREE,GE,N/A,1780647428000320500,N/A,N/A,cpu,' prof.csv && ok || bad "host row's FREE"
[ "$(grep -c '"{allocation_id:2,' prof.csv)" -eq 1 ] && ok || bad "Duration 0 read as a release"
# npu_mem's APP and Device rows; the Python exporter's 3-decimal KB rounded, with a note
grep -q ',COUNTER,NPU_MEM,Device/Memory,1780647428000000000,N/A,N/A,0,N/A,"{used:94117888}",,$' prof.csv &&
	ok || bad "npu_mem Device row"
grep -q 'values rounded to whole bytes' "$WORK/err" && ok || bad "no rounding note: $(cat "$WORK/err")"
# its mindstudio_profiler_output alone is the same output
expect_status 0 "$C" -q -o prof2.csv "$PROF/mindstudio_profiler_output"
expect_same prof.csv prof2.csv

# 4. torch_npu quirks: CRLF and LF in one folder, quoted names, release-only rows, 0-4 decimals,
# module samples left out with a note
expect_status 0 "$C" -o q.csv "$Q/crlf_lf_rank0_ascend_pt"
grep -q '^3,MALLOC,GE,"cann::Add,"fused" 1",1736405443872000100,' q.csv && ok || bad "quoted cann:: name"
grep -q '^8,FREE,PTA,N/A,1736405443875000123,N/A,N/A,0,N/A,"{allocation_id:5,size:2560,' q.csv &&
	ok || bad "release-only row"
grep -q '^9,MALLOC,PTA,npu::npu_format_cast,1736405443876000001,N/A,N/A,0,N/A,"{allocation_id:6,size:1,' q.csv &&
	ok || bad "4th decimal rounding / sub-byte size"
grep -q '^10,FREE,PTA,N/A,1736405443876002000,' q.csv && ok || bad "5 decimals rounding up"
grep -q '^5,MALLOC,PTA,aten::mul,1736405443873000000,' q.csv && ok || bad "time without decimals"
grep -q '^6,MALLOC,PTA,aten::add,1736405443874000500,.*"{allocation_id:4,size:512,total:1522532352,used:1002810880}"' q.csv &&
	ok || bad "trailing space, N/A fields"
grep -q ': 2 module samples left out: negative or huge Total Reserved' "$WORK/err" && ok ||
	bad "no note of the module samples left out: $(cat "$WORK/err")"
grep -q 'COUNTER,MODULE,HCCL\|COUNTER,MODULE,RUNTIME' q.csv && bad "negative/huge module sample kept" || ok
# the wrapped -1 of msprof's C++ exporter (18446744073709551615 KB) is a module sample left out
expect_status 0 "$C" -o - "$Q/module_wrapped/npu_module_mem_20260605162010.csv"
grep -q 'module samples left out' "$WORK/err" && ok || bad "wrapped -1: $(cat "$WORK/err")"
# MindSpore: memory_record's MB are 1000 KB, blocks in the MINDSPORE pool
expect_status 0 "$C" -q -o ms.csv "$Q/rank0_ascend_ms"
grep -q '^7,COUNTER,POOL,MindSpore,1700000000000100000,N/A,N/A,0,N/A,"{used:1048576,total:2560000,active:1048576}",,$' ms.csv &&
	ok || bad "MindSpore memory_record units"
[ "$(grep -c ',MALLOC,MINDSPORE,' ms.csv)" -eq 3 ] && ok || bad "MindSpore pool"

# 5. a row whose field count differs from the header's: an error naming the line; skipped and
# counted with --lenient (a trailing empty field more is msprof's trailing comma, not an error)
expect_status 3 "$C" -o bf.csv "$Q/bad_fields/operator_memory.csv"
expect_err_line '^memscope-convert: .*bad_fields/operator_memory\.csv:3: 11 fields, the header has 10$'
expect_absent bf.csv
expect_status 0 "$C" --lenient -o bf.csv "$Q/bad_fields/operator_memory.csv"
grep -q 'skipped 2 bad rows (first: .*operator_memory\.csv:3: 11 fields' "$WORK/err" && ok ||
	bad "lenient field count: $(cat "$WORK/err")"
grep -q ',MALLOC,PTA,aten::div,' bf.csv && ok || bad "trailing comma row"

# 6. memscope-leaks on a profiler output: exit leaks found, --fail-on-finding exits 1
expect_status 1 "$L" -q --fail-on-finding --kinds exit "$T/torch_npu_level0_rank0_ascend_pt"
grep -q '^Alive at the end of the profile: ' "$WORK/out" && ok || bad "leaks text report: $(head -3 "$WORK/out")"
expect_status 0 "$L" -q --fail-on-finding --kinds exit "$T/insight_test_rank_0"

# 7. a timeline in slices: every slice read, in order; an empty placeholder file and a compressed
# copy of a file also there uncompressed are left out, each with a note
mkdir -p sl/mindstudio_profiler_output
printf '[{"name":"ProfilerStep#1","ph":"X","cat":"cpu_op","ts":"1000","dur":10,"pid":7,"tid":1}]' \
	>sl/mindstudio_profiler_output/msprof_slice_0_20260101000000.json
printf '[{"name":"ProfilerStep#2","ph":"X","cat":"cpu_op","ts":"2000","dur":10,"pid":7,"tid":1}]' \
	>sl/mindstudio_profiler_output/msprof_slice_1_20260101000000.json
cp "$Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv" sl/mindstudio_profiler_output/
gzip -k sl/mindstudio_profiler_output/operator_memory.csv
: >sl/mindstudio_profiler_output/npu_mem_20260101000000.csv
expect_status 0 "$C" -o sl.csv sl
[ "$(grep -c ',OP_LAUNCH,ATEN_START,ProfilerStep#' sl.csv)" -eq 2 ] && ok || bad "timeline slices: $(grep -c ProfilerStep sl.csv)"
"$C" -q -o plain.csv "$Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
[ "$(grep -c ',MALLOC,' sl.csv)" -eq "$(grep -c ',MALLOC,' plain.csv)" ] && ok || bad "a compressed twin read too"
grep -q ': 1 empty file left out (npu_mem_20260101000000\.csv)$' "$WORK/err" &&
	grep -q ': 1 compressed copy of files also there uncompressed left out (operator_memory\.csv\.gz)$' "$WORK/err" &&
	ok || bad "notes of left-out files: $(cat "$WORK/err")"

# 8. a memory file of a folder that is not a regular file (a FIFO, a folder, a link to a device,
# a link to nothing): refused with one line naming it and saying why, exit 3, nothing written;
# a FIFO given by name alone is read as it comes (issue 35)
for kind in fifo folder zero dangling; do
	rm -rf nr nr.csv && mkdir -p nr/x_ascend_pt && cp -r "$Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT" nr/x_ascend_pt/
	op=nr/x_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv
	rm "$op"
	case $kind in
	fifo) mkfifo "$op" ;;
	folder) mkdir "$op" ;;
	zero) ln -s /dev/zero "$op" ;;
	dangling) ln -s "$WORK/nowhere/operator_memory.csv" "$op" ;;
	esac
	case $kind in
	fifo) why='is a FIFO \(named pipe\), not a regular file: not read' ;;
	folder) why='is a folder, not a regular file: not read$' ;;
	zero) why='a symbolic link to a character device, not a regular file: not read$' ;;
	dangling) why='a symbolic link to a file that cannot be reached \(No such file or directory\): not read$' ;;
	esac
	expect_status 3 timeout 20 "$C" -o nr.csv nr/x_ascend_pt
	expect_err_line "^memscope-convert: nr/x_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory\\.csv: $why"
	expect_absent nr.csv
	expect_status 3 timeout 20 "$L" nr/x_ascend_pt
	grep -q 'unreleased\|Alive at the end' "$WORK/out" && bad "$kind: a report from a folder not read" || ok
done
mkfifo alone.csv
cat "$Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv" >alone.csv &
expect_status 0 timeout 20 "$C" -q -o alone_out.csv alone.csv
wait
"$C" -q -o plain_op.csv "$Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
expect_same alone_out.csv plain_op.csv

# 9. a NUL byte in a CSV field, near the start or past the first block read, in a profiler CSV
# or a dump: refused naming file, line, column and field, nothing written; --lenient skips the
# row and says so (issue 35)
python3 - "$T/torch_npu_st_level2_rank_0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv" \
	"$SRC/testdata/memscope_dump_20250428113811.csv" <<'PY'
import sys
op = open(sys.argv[1], 'rb').read().split(b'\n')
for line, name in ((200, 'nul_late_op.csv'), (4, 'nul_early_op.csv')):
    rows = list(op)
    rows[line - 1] = b'aten::a\x00dd' + rows[line - 1][rows[line - 1].index(b','):]
    open(name, 'wb').write(b'\n'.join(rows))
dump = open(sys.argv[2], 'rb').read().split(b'\n')
dump[150] = dump[150].replace(b'MALLOC,PTA,N/A', b'MALLOC,PTA,ab\x00c', 1)
open('nul_late_dump.csv', 'wb').write(b'\n'.join(dump))
PY
mkdir -p nul_ascend_pt/ASCEND_PROFILER_OUTPUT && cp nul_late_op.csv nul_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory.csv
rm -f nul.csv
expect_status 3 "$C" -o nul.csv nul_late_op.csv
expect_err_line '^memscope-convert: nul_late_op\.csv:200: NUL byte at column 8, in field 1 '
expect_absent nul.csv
expect_status 3 "$C" -o nul.csv nul_early_op.csv
expect_err_line '^memscope-convert: nul_early_op\.csv:4: NUL byte at column 8, in field 1 '
expect_status 3 "$C" -o nul.csv nul_ascend_pt
expect_err_line '^memscope-convert: nul_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory\.csv:200: NUL byte at column 8, in field 1 '
expect_status 3 "$C" -o nul.csv nul_late_dump.csv
expect_err_line '^memscope-convert: nul_late_dump\.csv:151: NUL byte at column 18, in field 4 '
expect_absent nul.csv
rm -f nul.csv
expect_status 0 "$C" --lenient -o nul.csv nul_late_op.csv
grep -q 'skipped 1 bad row (first: nul_late_op\.csv:200: NUL byte' "$WORK/err" && ok || bad "lenient NUL: $(cat "$WORK/err")"
[ "$(tr -cd '\000' <nul.csv | wc -c)" -eq 0 ] && ok || bad "a NUL byte copied into the converted output"
expect_status 3 "$L" nul_late_op.csv

# 10. locations inside a profiler folder name the file, not the folder: leaks' groups (text and
# JSON), the unmatched FREE, compare's pool mix (issue 29)
expect_status 0 "$L" "$T/torch_npu_level0_rank0_ascend_pt"
grep -q "^   first $T/torch_npu_level0_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory\\.csv:56 at " "$WORK/out" &&
	ok || bad "leaks text: the first block's location: $(grep first "$WORK/out" | head -2)"
grep -q '_ascend_pt:[0-9]' "$WORK/out" "$WORK/err" && bad "a location names the folder: $(grep -h '_ascend_pt:[0-9]' "$WORK/out" "$WORK/err" | head -2)" || ok
expect_status 0 "$L" -q --format json "$T/torch_npu_level0_rank0_ascend_pt"
python3 - "$WORK/out" "$T/torch_npu_level0_rank0_ascend_pt" <<'PY' && ok || bad "leaks JSON: no file of the locations"
import json, sys
d = json.load(open(sys.argv[1]))
want = sys.argv[2] + "/ASCEND_PROFILER_OUTPUT/operator_memory.csv"
assert d["leaks"] and all(x["file"] == want and x["input"] == sys.argv[2] for x in d["leaks"])
assert d["leaks"][0]["line"] == 56, d["leaks"][0]
assert all(g["first"]["file"] == want for g in d["groups"])
PY
expect_status 0 "$L" -q --format json "$Q/bad_fields/operator_memory.csv" --lenient
python3 - "$WORK/out" "$Q/bad_fields/operator_memory.csv" <<'PY' && ok || bad "leaks JSON of a file alone: a file key"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["leaks"] and all("file" not in x for x in d["leaks"])
PY
expect_status 0 "$L" "$Q/crlf_lf_rank0_ascend_pt"
grep -q "^memscope-leaks: $Q/crlf_lf_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory\\.csv:6: FREE with no live MALLOC" "$WORK/err" &&
	ok || bad "unmatched FREE: $(grep 'no live' "$WORK/err")"
expect_status 3 "$BIN/memscope-compare" -o mix.csv -i "$Q/rank0_ascend_ms,$T/torch_npu_level0_rank0_ascend_pt"
grep -q "^memscope-compare: $T/torch_npu_level0_rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/operator_memory\\.csv:2: PTA pool row in a MINDSPORE comparison" "$WORK/err" &&
	ok || bad "compare: the mixed pool's row: $(cat "$WORK/err")"

# 11. a folder whose npu_module_mem was recorded 342 days after its other files: one warning
# line from the reader naming the files and the gap; pictures and spans keep each clock apart
# (its samples drawn from the input's start, labelled); a folder of one run is unchanged (issue 29)
R0="$T/insight_test_rank_0"
warn="^memscope-convert: $R0: npu_module_mem\\.csv recorded 342\\.1 days \\(29555075 s\\) after operator_memory\\.csv, memory_record\\.csv: "
expect_status 0 "$C" -o r0.csv "$R0"
[ "$(grep -cE "$warn" "$WORK/err")" -eq 1 ] && [ "$(grep -c 'days' "$WORK/err")" -eq 1 ] && ok ||
	bad "convert: not one warning line: $(cat "$WORK/err")"
# the converted rows keep their own times: the module rows 342 days after the rest
grep -q ',COUNTER,MODULE,SLOG,1724670453385978290,' r0.csv && ok || bad "converted module rows moved"
expect_status 0 "$BIN/memscope-export" --format chrome-trace -o r0.json "$R0"
[ "$(grep -c 'npu_module_mem\.csv recorded 342\.1 days' "$WORK/err")" -eq 1 ] && ok || bad "export: the warning: $(cat "$WORK/err")"
python3 - r0.json <<'PY' && ok || bad "chrome trace: clocks not kept apart"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
ts = [e["ts"] for e in ev if "ts" in e]
assert max(ts) - min(ts) < 10e6, (min(ts), max(ts))  # one run's seconds, not 342 days
mod = [e for e in ev if e.get("ph") == "C" and " module " in e["name"]]
assert mod and all(e["name"].endswith("(own clock, 342.1 days later)") for e in mod), mod[:2]
assert not [e for e in ev if e.get("ph") == "C" and " module " not in e["name"] and "own clock" in e["name"]]
assert len(d["otherData"]["clocks"]) == 1 and "npu_module_mem.csv" in d["otherData"]["clocks"][0]
PY
expect_status 0 "$BIN/memscope-export" -q --format html -o r0.html "$R0"
grep -q '<p class="note clock">npu_module_mem\.csv recorded 342\.1 days' r0.html && ok || bad "html: no note of the clocks"
grep -q 'HCCL reserved (npu_module_mem), device 0 (own clock, 342\.1 days later)\|HCCL (npu_module_mem), device 0 (own clock' r0.html &&
	ok || bad "html: module curve not labelled: $(grep -o '[A-Z]* [a-z]* (npu_module_mem)[^<]*' r0.html | head -2)"
python3 - r0.html <<'PY' && ok || bad "html: the axis spans the 342 days"
import re, sys
h = open(sys.argv[1]).read()
ticks = [float(x) for x in re.findall(r'>(\d+(?:\.\d+)?) s</text>', h)]
assert ticks and max(ticks) < 10, ticks[-3:]
PY
expect_status 0 "$BIN/memscope-batch" -q --format json -o r0b.json "$R0"
python3 - r0b.json <<'PY' && ok || bad "batch: the span measures across the clocks"
import json, sys
row = json.loads(open(sys.argv[1]).readline())
span = row["span_ns"]
assert span is not None and 0 < span < 10 * 10**9, span
PY
# one run's folder: no warning, no clock labels
expect_status 0 "$BIN/memscope-export" --format chrome-trace -o l0.json "$T/torch_npu_level0_rank0_ascend_pt"
grep -q 'own clock\|recorded .* days' "$WORK/err" l0.json && bad "a one-run folder split into clocks" || ok
grep -q '"clocks"' l0.json && bad "a one-run folder's trace has clocks" || ok

finish
