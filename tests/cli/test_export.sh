#!/bin/sh
# Golden CLI cases of memscope-export: valid speedscope and folded files whose weights sum to the
# metric's independent total, paths by stack, owner and op, the pools counted, one root frame per
# input, C frames, SVG labels, the format from -o's name, and bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
E="$BIN/memscope-export"
TOOL=$E
CHECK_SS="$SRC/tests/cli/check_speedscope.py"
CHECK_FOLDED="$SRC/tests/cli/check_folded.py"
CHECK_SVG="python3 $SRC/tests/cli/check_svg.py"
HARNESS="$SRC/tests/cli/svg_harness.html"
cd "$WORK" || exit 1
cp "$SRC"/testdata/baseline.csv "$SRC"/testdata/leaks.csv "$SRC"/testdata/db/hostile.csv .

# the stand-alone validators (tests/cli/check_*.py) accept every format and metric; weights sum to the totals an
# independent reading of the CSV gives (export_oracle.py) and that memscope-leaks reports, of the
# pools counted: by default the framework pools (PTA here: HAL holds their blocks), or all
for f in baseline leaks; do
	for pools in default all; do
		popt=
		[ $pools = all ] && popt="--pool all"
		set -- $(python3 "$SRC/tests/cli/export_oracle.py" $popt $f.csv)
		want_allocated=$2 want_count=$4 want_peak=$6 want_pools=$8
		"$BIN/memscope-leaks" -q --pool all --kinds exit --format csv $f.csv >leaks.out
		want_leaked=$(python3 -c 'import csv, sys
print(sum(int(r["size"]) for r in csv.DictReader(open(sys.argv[1]))
          if r["kind"] == "exit" and r["pool"] in sys.argv[2].split(",")))' leaks.out "$want_pools")
		for m in allocated peak leaked count; do
			expect_status 0 "$E" -q $popt --format folded --metric $m -o $f.$m.$pools.folded $f.csv
			eval want=\$want_$m
			expect_status 0 python3 "$CHECK_FOLDED" $f.$m.$pools.folded "$want"
		done
		expect_status 0 "$E" -q $popt --metric allocated,peak,leaked,count -o $f.$pools.json $f.csv
		expect_status 0 python3 "$CHECK_SS" $f.$pools.json
		expect_status 0 python3 -c 'import json, sys
d = json.load(open(sys.argv[1])); want = [int(x) for x in sys.argv[2:]]
got = [sum(p["weights"]) for p in d["profiles"]]
ends = [p["endValue"] for p in d["profiles"]]
units = [p["unit"] for p in d["profiles"]]
sys.exit(0 if got == want and ends == want and units == ["bytes"] * 3 + ["none"] else 1)' \
			$f.$pools.json "$want_allocated" "$want_peak" "$want_leaked" "$want_count"
	done
	cp $f.default.json $f.json
	for m in allocated peak leaked count; do cp $f.$m.default.folded $f.$m.folded; done
done
# the default counts PTA alone: 32.0 MiB of baseline.csv, not the 74.7 MiB of PTA and the HAL
# memory that holds it; the summary says which pools
expect_status 0 "$E" --format folded -o /dev/null baseline.csv
grep -qx 'memscope-export: pools counted: PTA (HAL left out: its memory holds their blocks; --pool all counts both)' "$WORK/err" &&
	grep -qx 'memscope-export: allocated: 7 paths, 32.0 MiB' "$WORK/err" && ok ||
	bad "baseline.csv default pools: $(cat "$WORK/err")"
# asked for, HAL beside PTA is counted, and said to be counted twice (whatever -q); HAL alone is not
expect_status 0 "$E" -q --pool all --format folded -o /dev/null baseline.csv
grep -qx "memscope-export: HAL memory holds the PTA pool's blocks: counted twice (--pool)" \
	"$WORK/err" && ok || bad "--pool all: no note: $(cat "$WORK/err")"
expect_status 0 "$E" -q --pool hal,pta,atb --format svg -o nested.svg baseline.csv
grep -q "; pools PTA, HAL (HAL memory holds the PTA pool's blocks: counted twice)<" nested.svg &&
	ok || bad "nested.svg: the subtitle does not say it"
expect_status 0 "$E" -q --pool hal --format folded -o /dev/null baseline.csv
grep -q 'counted twice' "$WORK/err" && bad "--pool hal: $(cat "$WORK/err")" || ok
# the peak profile names its moment
expect_status 0 python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["profiles"][1]["name"]
sys.exit(0 if n.startswith("peak live bytes: ") and " of process 3101864 " in n and n.endswith(" MiB live") and " ns" not in n else 1)' baseline.json

# the peak is the moment the highest (process, device, pool) went highest, not the end: process
# 7's PTA live bytes go 100, 300, 200, 250, 50, 60 (testdata/README.txt), process 8's HAL 250
cp "$SRC"/testdata/export/peak.csv .
printf '%s\n' 'b.py(2): B 200' 'a.py(1): A 100' >peak.expected
expect_out peak.expected --format folded --metric peak peak.csv
expect_status 0 "$E" -q --metric peak -o peak.json peak.csv
expect_status 0 python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["profiles"][0]["name"]
sys.exit(0 if n == "peak live bytes: PTA on device 0 of process 7 (input 0) at 0.000000 s, 300 B live" else 1)' peak.json
# text for people says when in seconds since the input's first row (of any kind, as memscope-leaks
# counts them), not as an epoch in ns: peak.csv's times in ms after a START_TRACE at 0.5 s
python3 - peak_s.csv <<'X'
import sys
rows = open("peak.csv").read().splitlines()
out = [rows[0], "0,SYSTEM,START_TRACE,N/A,1764753080500000000,7,7,N/A,N/A,,,"]
for r in rows[1:]:
    f = r.split(",")
    f[4] = str(1764753080000000000 + int(f[4]) * 1000000)
    out.append(",".join(f))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
X
expect_status 0 "$E" -q --metric peak -o peak_s.json peak_s.csv
expect_status 0 python3 "$CHECK_SS" peak_s.json
expect_status 0 python3 -c 'import json, sys
n = json.load(open(sys.argv[1]))["profiles"][0]["name"]
sys.exit(0 if n == "peak live bytes: PTA on device 0 of process 7 (input 0) at 0.502000 s, 300 B live" else 1)' peak_s.json
expect_status 0 "$E" -q --format svg --metric peak -o peak_s.svg peak_s.csv
grep -q '>peak live bytes: PTA on device 0 of process 7 (input 0) at 0.502000 s, 300 B live<' peak_s.svg &&
	ok || bad "peak_s.svg: $(grep -o '<text id="title"[^<]*' peak_s.svg)"
printf '%s\n' 'e.py(5): E 250' >peak_hal.expected
expect_out peak_hal.expected --format folded --metric peak --pool hal peak.csv

# several inputs: one root frame each, named by the shortest ending of their names no other input
# has; each input's own default pools (hal.csv has HAL alone: counted); --merge adds them up,
# the default pools those of the inputs together (PTA: HAL is left out)
grep -v ',PTA,' peak.csv >hal.csv
mkdir -p a b
cp peak.csv a/x.csv
cp peak.csv b/x.csv
cat >roots.expected <<'X'
hal.csv;e.py(5): E 250
peak.csv;b.py(2): B 200
peak.csv;a.py(1): A 100
peak.csv;c.py(3): C 50
peak.csv;d.py(4): D 10
X
expect_out roots.expected --format folded peak.csv hal.csv
printf '%s\n' 'b.py(2): B 200' 'a.py(1): A 100' 'c.py(3): C 50' 'd.py(4): D 10' >merged.expected
expect_out merged.expected --format folded --merge peak.csv hal.csv
expect_out merged.expected --format folded --merge peak.csv ./hal.csv
printf 'a/x.csv;b.py(2): B 200\nb/x.csv;b.py(2): B 200\n' >samename.expected
expect_status 0 "$E" -q --format folded a/x.csv b/x.csv
head -2 "$WORK/out" | sort | cmp -s - samename.expected && ok || bad "a/x.csv b/x.csv: $(cat "$WORK/out")"
cp peak.csv x.csv
# (peak.csv named twice is one input, listed once: cli.c)
expect_status 0 "$E" -q --format folded "$WORK/a/x.csv" x.csv peak.csv peak.csv - <hal.csv
grep -qx 'memscope-export: peak.csv: the same as peak.csv, listed once' "$WORK/err" && ok || bad "peak.csv twice: $(cat "$WORK/err")"
cut -d';' -f1 "$WORK/out" | sort -u >roots.got
printf '%s\n' 'a/x.csv' 'peak.csv' 'standard input' 'x.csv' >roots.want
expect_same roots.got roots.want
# the peak of several inputs is the highest of one input; count and allocated add up per root
expect_status 0 "$E" -q --format folded --metric peak -o peak2.folded peak.csv hal.csv
expect_status 0 python3 "$CHECK_FOLDED" peak2.folded 300

# paths: the Python stack then the C stack (its frames without offsets and addresses), root first;
# owner levels; a placeholder without either; PTA alone by default
cat >hostile.folded.expected <<'X'
b.py(2): g;a.py(1): f;libx.so+0x1 512
[PTA, no stack] 384
X
expect_out hostile.folded.expected --format folded hostile.csv
printf '%s\n' '[HAL, no stack] 4096' 'b.py(2): g;a.py(1): f 512' '[PTA, no stack] 384' >py.expected
expect_out py.expected --format folded --stack python --pool all hostile.csv
printf '%s\n' 'libx.so+0x1 512' '[PTA, no stack] 384' >c.expected
expect_out c.expected --format folded --stack c --pool pta hostile.csv
printf '%s\n' '[HAL, no owner] 4096' 'PTA;model;weight 512' '[PTA, no owner] 384' >owner.expected
expect_out owner.expected --format folded --group-by owner --pool hal,pta hostile.csv
# msMemScope writes both stacks innermost first (formats/dump-csv.md "Call stacks: frame
# order"): the path is the outermost Python frame first, down to the innermost C frame
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,MALLOC,PTA,N/A,1000,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:64}","/w/model.py(45): forward' \
	'/w/train.py(88): train_step' '/w/train.py(120): <module>","/l/libtorch_npu.so(_ZN7c10_npu5utils5emptyEv+0x10b) [0x7f01]' \
	'/l/libtorch_npu.so(_ZN2at6native9empty_npuEN3c108ArrayRefIlEE+0x44) [0x7f02]"' >order.csv
echo '/w/train.py(120): <module>;/w/train.py(88): train_step;/w/model.py(45): forward;at::native::empty_npu(c10::ArrayRef<long>) (libtorch_npu.so);c10_npu::utils::empty() (libtorch_npu.so) 64' >order.expected
expect_out order.expected --format folded order.csv
# speedscope splits Python frames into name, file and line
expect_status 0 "$E" -q -o h.json hostile.csv
expect_status 0 python3 -c 'import json, sys
fr = json.load(open(sys.argv[1]))["shared"]["frames"]
sys.exit(0 if {"name": "f", "file": "a.py", "line": 1} in fr and {"name": "libx.so+0x1"} in fr else 1)' h.json

# C frames are backtrace lines: demangled, the path, offset and address dropped, the module kept,
# so one function merges across call sites (its weights add); text that is no such line is kept
python3 - cframes.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
rows, i = [h], 0
def row(size, c):
    global i
    i += 1
    c = c.replace('"', '""')
    rows.append(f'{i},MALLOC,PTA,N/A,{1000 + i},7,7,0,{hex(i)},"{{allocation_id:{i},addr:{hex(i)},size:{size}}}",,"{c}"')
# 1000 call sites of one function under one caller: one path
for k in range(1000):
    row(2, f"/usr/lib/libtorch_npu.so(_ZN7c10_npu3fooEv+0x{k:x}) [0x7f3a9f44{k:04x}]\n"
           f"/usr/lib/libtorch_npu.so(_ZN7c10_npu4mainEv+0x1{k % 7}) [0x7f3a9f45{k:04x}]")
row(64, "libx.so(_Zgarbage_not_mangled+0x10) [0x1]")          # not demangled: kept as is
row(32, "libx.so(" + "_ZN1a" * 4000 + "+0x10) [0x2]")        # too long to demangle: kept
row(16, "python(PyEval_EvalFrame+0x5a) [0x55]\n(+0x1) [0x2]\nno parens at all")
row(8, "b(x) [y]\n" + "x" * 100000)                          # not backtrace lines: kept
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q --format folded -o cframes.folded cframes.csv
expect_status 0 python3 "$CHECK_FOLDED" cframes.folded 2120
grep -qx 'c10_npu::main() (libtorch_npu.so);c10_npu::foo() (libtorch_npu.so) 2000' cframes.folded &&
	grep -qx '_Zgarbage_not_mangled (libx.so) 64' cframes.folded &&
	grep -q '^_ZN1a_ZN1a.*_ZN1a (libx.so) 32$' cframes.folded &&
	grep -qx 'no parens at all;(+0x1) \[0x2\];PyEval_EvalFrame (python) 16' cframes.folded &&
	grep -q '^xxxxxxxxxx*;b(x) \[y\] 8$' cframes.folded &&
	[ "$(wc -l <cframes.folded)" -eq 5 ] && ok || bad "cframes.folded: $(cut -c1-200 cframes.folded)"
expect_status 0 "$E" -q -o cframes.json cframes.csv
expect_status 0 python3 "$CHECK_SS" cframes.json
expect_status 0 "$E" -q --format svg -o cframes.svg cframes.csv
expect_status 0 $CHECK_SVG cframes.svg cframes.folded bytes
# frames that would break a folded line: ';', a trailing " <digits>", blanks, invalid UTF-8
python3 -c 'import sys
open(sys.argv[1], "wb").write(b"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n"
  b"1,MALLOC,PTA,N/A,1000,7,7,0,0x0000000000001000,\"{allocation_id:1,addr:0x0000000000001000,size:64}\",\"f 12\n  a;b  \",\"\xff\"\n")' frames.csv
expect_status 0 "$E" -q --format folded --stack python -o frames.folded frames.csv
expect_status 0 python3 "$CHECK_FOLDED" frames.folded 64
grep -q '^a:b;f_12 64$' frames.folded && ok || bad "frames.folded: $(cat frames.folded)"
expect_status 0 "$E" -q --format folded -o frames2.folded frames.csv
expect_status 0 python3 "$CHECK_FOLDED" frames2.folded 64
grep -q '^a:b;f 12;? 64$' frames2.folded && ok || bad "frames2.folded: $(cat frames2.folded)"

# grouping by stack a dump without stacks or owner tags falls back to op, said in one line (and
# in the SVG's subtitle, below); it reads the input once: standard input works
expect_status 0 "$E" --format folded -o nostack.folded baseline.csv
grep -c 'grouped by op' "$WORK/err" | grep -qx 1 &&
	grep -qx 'memscope-export: no MALLOC has a call stack or owner tag: grouped by op, the op that allocated each block' "$WORK/err" &&
	ok || bad "baseline.csv: no fallback note: $(cat "$WORK/err")"
"$E" -q --format folded --group-by op -o byop.folded baseline.csv
expect_same nostack.folded byop.folded
expect_status 0 "$E" -q --format folded - <baseline.csv
expect_same "$WORK/out" byop.folded
expect_status 0 "$E" -q --metric allocated,peak,leaked,count -o nostack.json baseline.csv
"$E" -q --group-by op --metric allocated,peak,leaked,count -o byop.json baseline.csv
expect_same nostack.json byop.json
# no op rows either: the placeholder stays, no note
grep -v OP_LAUNCH baseline.csv >noops.csv
expect_status 0 "$E" -q --format folded noops.csv
[ "$(cat "$WORK/out")" = '[PTA, no stack] 33571840' ] && [ ! -s "$WORK/err" ] && ok ||
	bad "noops.csv: $(cat "$WORK/out" "$WORK/err")"
# one MALLOC with a stack, after the others: grouped by stack
python3 - late.csv <<'X'
import sys
rows = open("baseline.csv").read().splitlines()
last = max(i for i, r in enumerate(rows) if ",MALLOC,PTA," in r)
rows[last] = rows[last][:-2] + ',"late.py(9): g",'
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" --format folded late.csv
grep -q '^late.py(9): g ' "$WORK/out" && grep -q '^\[PTA, no stack\] ' "$WORK/out" &&
	! grep -q 'grouped by op' "$WORK/err" && ok || bad "late.csv: $(cat "$WORK/out" "$WORK/err")"

# grouped by op: the ops open on the MALLOC's thread when it ran, outermost first, whatever
# order the rows come in (ops.csv is derived in testdata/README.txt); the same paths as an
# independent replay of each thread's op rows up to every MALLOC (export_oracle.py --by-op)
cp "$SRC"/testdata/export/ops.csv .
printf '%s\n' 'aten.linear;aten.addmm 64' 'LinearOperation 32' '[PTA, no op] 16' 'a;b 8' >ops.expected
expect_out ops.expected --format folded --group-by op ops.csv
printf '%s\n' 'aten.linear;aten.addmm 64' >ops.peak.expected
expect_out ops.peak.expected --format folded --group-by op --metric peak ops.csv
printf '%s\n' 'LinearOperation 32' '[PTA, no op] 16' 'a;b 8' >ops.leaked.expected
expect_out ops.leaked.expected --format folded --group-by op --metric leaked ops.csv
for f in ops baseline leaks; do
	python3 "$SRC/tests/cli/export_oracle.py" --by-op $f.csv | sort >$f.op.want
	"$E" -q --format folded --group-by op $f.csv | sort >$f.op.got
	[ -s $f.op.want ] && cmp -s $f.op.want $f.op.got && ok || bad "$f: by op differs from the replay"
done
# 70 nested ops: the outermost 64 are frames, and the end of the outermost closes them all
python3 - deep.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
rows = [f"{k + 1},OP_LAUNCH,ATEN_START,op{k},{100 + k},7,7,0,N/A,,," for k in range(70)]
rows.append('71,MALLOC,PTA,N/A,200,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:64}",,')
rows.append("72,OP_LAUNCH,ATEN_END,op0,300,7,7,0,N/A,,,")
rows.append("73,OP_LAUNCH,ATEN_END,zzz,310,7,7,0,N/A,,,")
rows.append('74,MALLOC,PTA,N/A,400,7,7,0,0x2000,"{allocation_id:2,addr:0x2000,size:16}",,')
open(sys.argv[1], "w").write("\n".join([h] + rows) + "\n")
X
python3 -c 'print(";".join(f"op{k}" for k in range(64)) + " 64")' >deep.expected
echo '[PTA, no op] 16' >>deep.expected
expect_out deep.expected --format folded --group-by op deep.csv
python3 "$SRC/tests/cli/export_oracle.py" --by-op deep.csv | sort >deep.want
sort deep.expected | cmp -s - deep.want && ok || bad "deep.csv: the replay differs"
expect_status 0 "$E" --format folded --group-by op -o deep.folded deep.csv
grep -qx 'memscope-export: op rows that made no frame: 1 ends with no open op of their name, 69 ops without an end of their own, 6 ops past 64 open on their thread' "$WORK/err" &&
	ok || bad "deep.csv: op rows not reported: $(cat "$WORK/err")"
# several inputs are apart: an op of one is not open in another; added up with --merge, each under
# its root frame without
cp ops.csv ops-copy.csv # (one file named twice would be read once)
expect_status 0 "$E" -q --format folded --group-by op --merge -o ops2.folded ops.csv ops-copy.csv
expect_status 0 python3 -c 'import sys
a = dict(l.rsplit(" ", 1) for l in open(sys.argv[1]).read().splitlines())
b = dict(l.rsplit(" ", 1) for l in open(sys.argv[2]).read().splitlines())
sys.exit(0 if a.keys() == b.keys() and all(int(b[k]) == 2 * int(a[k]) for k in a) else 1)' ops.op.got ops2.folded
expect_status 0 "$E" -q --format folded --group-by op -o ops3.folded ops.csv ./ops-copy.csv
expect_status 0 python3 -c 'import sys
a = sorted(l for l in open(sys.argv[1]).read().splitlines())
b = sorted(l.split(";", 1)[1] for l in open(sys.argv[2]).read().splitlines() if l.startswith(sys.argv[3]))
sys.exit(0 if a == b else 1)' ops.op.got ops3.folded 'ops-copy.csv;'
# one input of several without op rows does not make the others fall back to op
expect_status 0 "$E" -q --format folded -o mixed.folded peak.csv baseline.csv
grep -q '^peak.csv;b.py(2): B 200$' mixed.folded && grep -q '^baseline.csv;\[PTA, no stack\] ' mixed.folded &&
	ok || bad "mixed.folded: $(cat mixed.folded)"
expect_status 0 "$E" -q --group-by op --metric allocated,peak,leaked,count -o ops.json baseline.csv
expect_status 0 python3 "$CHECK_SS" ops.json
expect_status 0 python3 -c 'import json, sys
a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))
tot = lambda d: [sum(p["weights"]) for p in d["profiles"]]
sys.exit(0 if tot(a) == tot(b) else 1)' ops.json baseline.json

# svg: the flame graph of each metric has the frames, widths, tooltips and labels the folded
# stacks of the same metric make (check_svg.py); its script, run by headless Chromium, shows a
# frame's tooltip on hover, zooms on a click, searches and resets (tests/cli/svg_harness.html)
for m in allocated peak leaked count; do
	expect_status 0 "$E" -q --format svg --metric $m -o baseline.$m.svg baseline.csv
	unit=bytes
	[ $m = count ] && unit=allocations
	expect_status 0 $CHECK_SVG baseline.$m.svg baseline.$m.folded $unit
done
expect_status 0 $CHECK_SVG baseline.allocated.svg baseline.allocated.folded bytes "$HARNESS" \
	'torch._ops.aten.mse_loss.default' 'aten.m'
"$E" -q --format folded --group-by op -o ops.folded ops.csv
expect_status 0 "$E" -q --format svg --group-by op -o ops.svg ops.csv
expect_status 0 $CHECK_SVG ops.svg ops.folded bytes "$HARNESS" 'aten.linear' '^a'
grep -q '>peak live bytes: PTA on device 0 of process 7 (input 0) at 0.000000 s, 300 B live<' \
	"$(expect_status 0 "$E" -q --format svg --metric peak -o peak.svg peak.csv; echo peak.svg)" &&
	ok || bad "peak.svg: no peak title"
# text for people in binary units (the title), exact bytes beside them where a machine or a
# careful reader looks (the tooltips); counts exact
grep -q '<title>all (32.0 MiB, 33,571,840 bytes, 100.00%)</title>' baseline.allocated.svg &&
	grep -q '<text id="title" x="600" y="24">allocated bytes (total: 32.0 MiB)</text>' baseline.allocated.svg &&
	grep -q '<text id="title" x="600" y="24">allocations (total: [0-9,]* allocations)</text>' baseline.count.svg &&
	! grep -q '<text id="title"[^<]*[0-9],[0-9][0-9][0-9] bytes' baseline.allocated.svg baseline.peak.svg &&
	ok || bad "baseline.allocated.svg: root tooltip or title: $(grep -o '<text id="title"[^<]*' baseline.allocated.svg)"
grep -q '>baseline.csv; by op: the op that allocated each block (no call stacks); pools PTA<' baseline.allocated.svg && ok ||
	bad "baseline.allocated.svg: the subtitle does not say by op"
# an Ascend profiler output's blocks have no stacks and each MALLOC names the op that allocated
# its block (operator_memory's Name): the graph is by that op, as --group-by op makes it, and the
# subtitle and the note say so; the weights are operator_memory's sizes per Name
T0=$SRC/testdata/msprof/torch_npu_level0_rank0_ascend_pt
expect_status 0 "$E" --format svg -o t0.svg "$T0"
grep -q '>torch_npu_level0_rank0_ascend_pt; by op: the op that allocated each block (no call stacks); pools PTA, GE<' t0.svg &&
	grep -qx 'memscope-export: no MALLOC has a call stack or owner tag: grouped by op, the op that allocated each block' "$WORK/err" &&
	ok || bad "t0.svg: subtitle or note: $(grep -o '<text id="subtitle"[^<]*' t0.svg) $(cat "$WORK/err")"
"$E" -q --format folded -o t0.folded "$T0"
"$E" -q --format folded --group-by op -o t0.op.folded "$T0"
expect_same t0.folded t0.op.folded
expect_status 0 python3 - t0.folded "$T0/ASCEND_PROFILER_OUTPUT/operator_memory.csv" <<'X'
import csv, sys
from decimal import Decimal
got = {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[1])}
want = {}
for r in csv.DictReader(open(sys.argv[2], newline="")):
    size = round(Decimal(r["Size(KB)"].strip()) * 1024)
    if size > 0 and r["Allocation Time(us)"].strip():
        name = r["Name"].strip() or "[PTA, no op]"
        want[name] = want.get(name, 0) + size
sys.exit(0 if got == want and len(got) > 20 else f"{sorted(set(got.items()) ^ set(want.items()))[:4]}")
X
# a label too long for its frame keeps its start and its end, the middle elided (a C frame's
# arguments and module go first): siblings that differ at the end stay apart, the start they
# share left out
python3 - labels.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
rows = [h]
for i, (name, size) in enumerate([("main.py(1): big", 50000), ("torch._ops.aten.addmm.default", 10000),
                                  ("torch._ops.aten.addcmul.default", 10000), ("torch/nn/modules/module.py(1501): _call_impl", 12000)]):
    rows.append(f'{i + 1},MALLOC,PTA,N/A,{i + 1},7,7,0,{hex(i + 1)},"{{allocation_id:{i + 1},addr:{hex(i + 1)},size:{size}}}","{name}",')
for i, (sym, size) in enumerate([("_ZN7c10_npu19NPUCachingAllocator6mallocEPPvim", 12000),
                                 ("_ZN2at6native9empty_npuEN3c108ArrayRefIlEE", 20000)]):
    rows.append(f'{i + 5},MALLOC,PTA,N/A,{i + 5},7,7,0,{hex(i + 5)},"{{allocation_id:{i + 5},addr:{hex(i + 5)},size:{size}}}",,"/lib/libtorch_npu.so({sym}+0x1f) [0x7f01]"')
open(sys.argv[1], "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q --format svg -o labels.svg labels.csv
"$E" -q --format folded -o labels.folded labels.csv
expect_status 0 $CHECK_SVG labels.svg labels.folded bytes "$HARNESS" 'torch._ops.aten.addmm.default' 'addc'
grep -q '>…ddmm\.default<' labels.svg && grep -q '>…cmul\.default<' labels.svg &&
	grep -q '>torch…_call_impl<' labels.svg && grep -q '>c10_npu::…malloc<' labels.svg &&
	grep -q '>at::native::empty_npu<' labels.svg && ok ||
	bad "labels.svg: $(grep -o '<text x[^<]*</text>' labels.svg)"
# a label shows a few meaningful characters or nothing: at least 4 after the ellipsis, none or
# at least 3 before it, a name never elided into a 1-3 character stub ("…in", "c1…:utils::empty",
# "t…py(120): main"); "::" ends one part; checked statically and zoomed (the script's labels) on
# four ranks with msMemScope's stacks (innermost first) of C and Python frames, and on names of
# characters that take several bytes
python3 - ranks <<'X'
import os, sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
py = [["/work/train.py(120): main"],
      ["/work/model.py(45): forward", "/work/train.py(88): train_step", "/work/train.py(120): main"],
      ["/usr/lib/python3/dist-packages/torch/nn/modules/module.py(1501): _call_impl",
       "/work/model.py(45): forward", "/work/train.py(88): train_step", "/work/train.py(120): main"],
      ["/work/optim.py(12): step", "/work/train.py(91): train_step", "/work/train.py(120): main"],
      ["/work/データ.py(7): 読み込み", "/work/train.py(120): main"]]
c = [["/usr/lib/libtorch_npu.so(_ZN7c10_npu5utils5emptyEv+0x10b) [0x7f3a9f4445dc]",
      "/usr/lib/libtorch_npu.so(_ZN2at6native9empty_npuEN3c108ArrayRefIlEE+0x44) [0x7f3a9f400100]"],
     ["/usr/lib/libtorch_npu.so(_ZN7c10_npu19NPUCachingAllocator6mallocEm+0x10b) [0x7f3a9f4445dc]",
      "/usr/lib/libtorch_npu.so(_ZN7c10_npu5utils5emptyEv+0x10b) [0x7f3a9f4445dd]"], []]
sizes = [2**30, 3 * 2**30, 5 * 2**29, 2**20, 4096, 7 * 2**30, 100]
for r in range(4):
    os.makedirs(f"{sys.argv[1]}/rank{r}", exist_ok=True)
    rows = [h]
    for i in range(1, 61):
        p, cc, size = py[(i * (r + 1)) % 5], c[(i * 7 + r) % 3], sizes[(i * 3 + r) % 7]
        a = hex(0x10000 + i * 0x1000)
        rows.append(f'{i},MALLOC,PTA,N/A,{1764753080475000000 + i * 1000},{100 + r},100,0,{a},'
                    f'"{{allocation_id:{i},addr:{a},size:{size}}}","' + "\n".join(p) + '","' + "\n".join(cc) + '"')
    if not r:  # one wide C frame
        rows.append(f'61,MALLOC,PTA,N/A,1764753080475070000,100,100,0,0x90000,'
                    f'"{{allocation_id:61,addr:0x90000,size:{200 * 2**30}}}","{py[0][0]}","{c[0][0]}"')
    open(f"{sys.argv[1]}/rank{r}/memscope_dump_2025.csv", "w").write("\n".join(rows) + "\n")
X
expect_status 0 "$E" -q --format svg -o ranks.svg ranks/rank*/memscope_dump_2025.csv
"$E" -q --format folded -o ranks.folded ranks/rank*/memscope_dump_2025.csv
expect_status 0 $CHECK_SVG ranks.svg ranks.folded bytes "$HARNESS" 'c10_npu::utils::empty() (libtorch_npu.so)' 'empty'
expect_status 0 $CHECK_SVG ranks.svg ranks.folded bytes "$HARNESS" 'rank1/memscope_dump_2025.csv' 'main'
expect_status 0 python3 -c 'import re, sys, xml.etree.ElementTree as ET
labels = [t.text or "" for t in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}text")
          if t.get("id") is None]
cut = [l for l in labels if "\u2026" in l]
stub = [l for l in cut if len(l.split("\u2026")[1]) < 4 or 0 < len(l.split("\u2026")[0]) < 3]
sys.exit(0 if cut and not stub and "" in labels and "c10_npu::utils::empty() (libtorch_npu.so)" in labels else 1)' ranks.svg
# the rule on the names the user saw, by width in characters (the graphs above hold the C
# writer, the script and check_svg.py to one rule)
expect_status 0 python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import check_svg as c
want = {("c10_npu::utils::empty", 17): "c10_…utils::empty", ("c10_npu::utils::empty", 5): "…mpty",
        ("c10_npu::utils::empty", 4): "", ("/work/train.py(120): main", 16): "…py(120): main",
        ("/work/train.py(120): main", 8): "/wo…main", ("/work/train.py(120): main", 6): "…main",
        ("main", 3): "", ("main", 4): "main", ("forward", 4): "", ("forward", 5): "…ward",
        ("torch._ops.aten.addmm.default", 14): "…addmm.default"}
got = {k: c.label(k[0], 6 + k[1] * 7.2 + 0.001) for k in want}
sys.exit(0 if got == want else print(got) or 1)' "$SRC/tests/cli"
# names that are markup or not UTF-8 stay well-formed XML
printf '%s\n' 'ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)' \
	'1,MALLOC,PTA,N/A,1000,7,7,0,0x1000,"{allocation_id:1,addr:0x1000,size:64}","<a&b> ""q"" ]]>",' >markup.csv
printf '\377\001\357\277\276,\n' | sed 's/^/2,MALLOC,PTA,N\/A,1001,7,7,0,0x2000,"{allocation_id:2,addr:0x2000,size:32}",/' >>markup.csv
expect_status 0 "$E" -q --format svg -o markup.svg markup.csv
expect_status 0 python3 -c 'import sys, xml.etree.ElementTree as ET
t = [e.text for e in ET.parse(sys.argv[1]).getroot().iter("{http://www.w3.org/2000/svg}title")]
sys.exit(0 if "<a&b> \"q\" ]]> (64 bytes, 66.67%)" in t and "? ? (32 bytes, 33.33%)" in t else 1)' markup.svg
# a graph stays one a browser opens: a 1000-frame stack is cut at 256 levels, and of 110,000
# frames the 100,000 widest, then shallowest, are drawn (here: the 90 outermost levels)
python3 - deep1.csv many.csv <<'X'
import sys
h = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)"
row = lambda i, size, frames: (f'{i},MALLOC,PTA,N/A,{i},7,7,0,{hex(i)},"{{allocation_id:{i},addr:{hex(i)},size:{size}}}","'
                               + "\n".join(frames) + '",')
open(sys.argv[1], "w").write(h + "\n" + row(1, 1000000, [f"deep.py({k}): f" for k in range(1000)]) + "\n")
open(sys.argv[2], "w").write("\n".join([h] + [row(i + 1, 1, [f"s{i}.py({k}): f" for k in range(100)])
                                         for i in range(1100)]) + "\n")
X
expect_status 0 "$E" -q --format svg -o deep1.svg deep1.csv
"$E" -q --format folded -o deep1.folded deep1.csv
expect_status 0 $CHECK_SVG deep1.svg deep1.folded bytes
[ "$(grep -c '<g data-n' deep1.svg)" -eq 257 ] && grep -q '<title>\[deeper frames\] (977 KiB, 1,000,000 bytes' deep1.svg &&
	ok || bad "deep1.svg: not cut at 256 levels"
expect_status 0 "$E" -q --format svg -o many.svg many.csv
"$E" -q --format folded -o many.folded many.csv
expect_status 0 $CHECK_SVG many.svg many.folded bytes
[ "$(grep -c '<g data-n' many.svg)" -eq 99001 ] && grep -q '; 11000 frames left out (the narrowest, then the deepest)<' many.svg &&
	ok || bad "many.svg: $(grep -c '<g data-n' many.svg) frames"

# nothing allocated: the root alone
head -1 baseline.csv >empty.csv
expect_status 0 "$E" -q --format svg -o empty.svg empty.csv
grep -q '<title>all (0 bytes, 100.00%)</title>' empty.svg && ok || bad "empty.svg: no root"

# several inputs add up, each under its root frame (speedscope and svg the same way), or merged
for m in allocated count; do
	total=$(($(python3 "$SRC/tests/cli/export_oracle.py" baseline.csv | tr ' ' '\n' | grep -A1 "^$m$" | tail -1) +
		$(python3 "$SRC/tests/cli/export_oracle.py" leaks.csv | tr ' ' '\n' | grep -A1 "^$m$" | tail -1)))
	expect_status 0 "$E" -q --format folded --metric $m -o both.$m.folded baseline.csv leaks.csv
	expect_status 0 python3 "$CHECK_FOLDED" both.$m.folded $total
	expect_status 0 "$E" -q --format folded --metric $m --merge -o merged.$m.folded baseline.csv leaks.csv
	expect_status 0 python3 "$CHECK_FOLDED" merged.$m.folded $total
done
[ "$(cut -d';' -f1 both.allocated.folded | sort -u | tr '\n' ' ')" = "baseline.csv leaks.csv " ] &&
	! grep -q '^baseline.csv;\|^leaks.csv;' merged.allocated.folded && ok ||
	bad "both.allocated.folded: the roots are not the inputs"
expect_status 0 "$E" -q --format svg -o both.svg baseline.csv leaks.csv
expect_status 0 $CHECK_SVG both.svg both.allocated.folded bytes "$HARNESS" 'leaks.csv' 'mse'
expect_status 0 "$E" -q --metric allocated,count -o both.json baseline.csv leaks.csv
expect_status 0 python3 "$CHECK_SS" both.json
expect_status 0 python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
names = [f["name"] for f in d["shared"]["frames"]]
roots = {names[s[0]] for p in d["profiles"] for s in p["samples"]}
sys.exit(0 if roots == {"baseline.csv", "leaks.csv"} and d["name"] == "baseline.csv and 1 more" else 1)' both.json

# chrome-trace: live bytes per process, device and pool over time (peak.csv's are derived in
# testdata/README.txt), the pools' used/reserved attrs, op slices; valid for trace viewers (every
# pool and every sample here: the default pools and samples are tests/cli/test_timeline.sh's)
expect_status 0 "$E" -q --format chrome-trace --pool all --resolution 0 -o peak.trace.json peak.csv
expect_status 0 python3 "$SRC/tests/cli/check_chrome_trace.py" peak.trace.json
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
s = lambda n: [e["args"]["bytes"] for e in ev if e.get("name") == n]
sys.exit(0 if s("PTA device 0 live") == [100, 300, 200, 250, 50, 60] and s("HAL device 0 live") == [250, 0] and [e["ts"] for e in ev if e.get("name") == "PTA device 0 live"][:2] == [1.001, 1.002] else 1)' peak.trace.json
expect_status 0 "$E" -q --format chrome-trace --pool all --resolution 0 -o baseline.trace.json baseline.csv
expect_status 0 python3 "$SRC/tests/cli/check_chrome_trace.py" baseline.trace.json
expect_status 0 python3 -c 'import csv, json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
rows = list(csv.DictReader(open(sys.argv[2])))
used = sum(1 for r in rows if r["Event"] in ("MALLOC", "FREE") and ",used:" in r["Attr"])
starts = sum(1 for r in rows if r["Event Type"] in ("ATEN_START", "ATB_START"))
got_used = sum(1 for e in ev if e.get("ph") == "C" and e["name"].endswith(" used"))
got_b = sum(1 for e in ev if e.get("ph") == "X" and e.get("cat") == "op")
sys.exit(0 if used and got_used == used and got_b == starts else 1)' baseline.trace.json baseline.csv

# usage and bad input
expect_status 2 "$E" --format svg --metric peak,leaked baseline.csv
expect_err_line 'svg holds one metric, 2 given'
expect_status 2 "$E" --format png baseline.csv
expect_err_line "expected speedscope, folded, svg, chrome-trace or html, got 'png'"
expect_status 2 "$E" --format folded --metric allocated,count baseline.csv
expect_err_line 'folded holds one metric, 2 given'
expect_status 2 "$E" --metric bytes baseline.csv
expect_err_line "^memscope-export: --metric: expected allocated, peak, leaked and/or count, got 'bytes'$"
expect_status 2 "$E" --group-by nothing baseline.csv
expect_err_line "^memscope-export: --group-by: expected stack, owner or op, got 'nothing'$"
expect_status 2 "$E" --stack java baseline.csv
expect_err_line "^memscope-export: --stack: expected python, c or both, got 'java'$"
expect_status 2 "$E" --stack python,c baseline.csv
expect_status 2 "$E" --pool nopool baseline.csv
expect_status 2 "$E" -o baseline.csv baseline.csv
expect_status 0 "$E" -q -o exists.json baseline.csv
expect_status 2 "$E" -o exists.json baseline.csv
expect_err_line 'exists'
sed '9s/,1764753084427185510,/,17647530844x,/' baseline.csv >bad.csv
expect_status 3 "$E" -o bad.json bad.csv
expect_err_line '^memscope-export: bad.csv:9: invalid Timestamp "17647530844x"$'
expect_absent bad.json
expect_status 4 "$E" -o x.json missing.csv
expect_absent x.json

# the format from -o's name when --format is not given: .svg, .folded and .txt, .json
# (speedscope), .trace.json (Chrome trace), any case; a name without an ending or standard
# output: speedscope (another ending is refused: cases/inputs.test)
for case in 'g.svg:<?xml' 'g.SVG:<?xml' 'g.folded:torch.' 'g.txt:torch.' 'g.json:{"$schema"' \
	'g.speedscope.json:{"$schema"' 'g.trace.json:{"displayTimeUnit"' 'g:{"$schema"'; do
	name=${case%%:*} start=${case#*:}
	expect_status 0 "$E" -q -o $name baseline.csv
	[ "$(head -c ${#start} $name)" = "$start" ] && ok || bad "-o $name: $(head -c 40 $name)"
done
expect_status 0 "$E" -q baseline.csv
[ "$(head -c 10 "$WORK/out")" = '{"$schema"' ] && ok || bad "stdout is not speedscope"
# a --format the name contradicts is refused; one the name can hold is not
expect_status 2 "$E" --format speedscope -o c.svg baseline.csv
expect_err_line '^memscope-export: --format speedscope contradicts -o c.svg \(svg\)$'
expect_absent c.svg
expect_status 2 "$E" --format folded -o c.json baseline.csv
expect_err_line '^memscope-export: --format folded contradicts -o c.json \(speedscope\)$'
expect_status 2 "$E" --format speedscope -o c.trace.json baseline.csv
expect_err_line 'contradicts -o c.trace.json \(chrome-trace\)$'
expect_status 0 "$E" -q --format chrome-trace -o c.json baseline.csv
expect_status 0 python3 "$SRC/tests/cli/check_chrome_trace.py" c.json
expect_status 0 "$E" -q --format svg -o c.data baseline.csv
# the format from the name takes the checks --format takes
expect_status 2 "$E" --metric allocated,count -o c.svg baseline.csv
expect_err_line 'svg holds one metric, 2 given'
expect_status 2 "$E" --metric peak -o c.trace.json baseline.csv
expect_err_line '^memscope-export: --metric does nothing for --format chrome-trace$'

# an option that does nothing for the output asked for is refused, one line naming both
expect_status 2 "$E" --format chrome-trace --metric peak --group-by op baseline.csv
expect_err_line '^memscope-export: --metric does nothing for --format chrome-trace$'
expect_status 2 "$E" --format chrome-trace --group-by op baseline.csv
expect_err_line '^memscope-export: --group-by does nothing for --format chrome-trace$'
expect_status 2 "$E" --format chrome-trace --stack c baseline.csv
expect_err_line '^memscope-export: --stack does nothing for --format chrome-trace$'
expect_status 2 "$E" --format chrome-trace --merge baseline.csv leaks.csv
expect_err_line '^memscope-export: --merge does nothing for --format chrome-trace$'
expect_status 2 "$E" --group-by op --stack c baseline.csv
expect_err_line '^memscope-export: --stack does nothing for --group-by op$'
expect_status 2 "$E" --group-by owner --stack python baseline.csv
expect_err_line '^memscope-export: --stack does nothing for --group-by owner$'
for opt in '--step 1' '--from 1' '--to 1' '--resolution 1ms'; do
	expect_status 2 "$E" --format svg $opt baseline.csv
	expect_err_line "^memscope-export: ${opt%% *} does nothing for --format svg$"
done
# --merge with one input, and --stack with --group-by stack, are fine
expect_status 0 "$E" -q --merge --stack python --format folded baseline.csv
finish
