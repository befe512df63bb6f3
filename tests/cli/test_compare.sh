#!/bin/sh
# Golden CLI cases of memscope-compare: the reference's outputs, its rules, inputs it fails on, bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
M="$BIN/memscope-compare"
TOOL=$M
T="$SRC/testdata"
cd "$WORK" || exit 1

# the reference's own output for its sample pair (formats/analyses.md "Compare: worked examples")
expect_status 0 "$M" -q --input "$T/baseline.csv,$T/leaks.csv" -o out.csv
expect_same out.csv "$T/compare/baseline_vs_leaks_expected.csv"
# the legacy smoke pair at kernel level: the reference's 12 rows, devices ascending (same section)
cat >smoke_expected.csv <<'ROWS'
,,,Base,Compare
Event,Name,Device Id,Allocated Memory(byte),Allocated Memory(byte),Diff Memory(byte)
KERNEL_LAUNCH,N/A,0,7168,7168,0
KERNEL_LAUNCH,N/A,0,3584,3584,0
KERNEL_LAUNCH,N/A,0,3584,3584,0
KERNEL_LAUNCH,N/A,0,1024,1024,0
KERNEL_LAUNCH,N/A,0,512,18944,18432
KERNEL_LAUNCH,N/A,0,18944,N/A,-18944
KERNEL_LAUNCH,N/A,1,7168,7168,0
KERNEL_LAUNCH,N/A,1,3584,3584,0
KERNEL_LAUNCH,N/A,1,3584,3584,0
KERNEL_LAUNCH,N/A,1,-18944,-18944,0
KERNEL_LAUNCH,N/A,1,512,512,0
KERNEL_LAUNCH,N/A,1,512,N/A,-512
ROWS
expect_status 0 "$M" -q --level kernel --input \
	"$T/memscope_dump_20250428113810.csv,$T/memscope_dump_20250428113811.csv" -o smoke.csv
expect_same smoke.csv smoke_expected.csv
# hand-built rules: tie rule and one-sided rows (same section), MindSpore at kernel level with two
# devices, both levels in one sequence; the full-width comma
expect_status 0 "$M" -q --input "$T/compare/tie_base.csv，$T/compare/tie_cmp.csv" -o tie.csv
expect_same tie.csv "$T/compare/tie_expected.csv"
expect_status 0 "$M" -q --level kernel --input "$T/compare/ms_base.csv,$T/compare/ms_cmp.csv" -o ms.csv
expect_same ms.csv "$T/compare/ms_expected.csv"
expect_status 0 "$M" -q --level op,kernel --input "$T/compare/both_base.csv,$T/compare/both_cmp.csv" -o both.csv
expect_same both.csv "$T/compare/both_expected.csv"

# --measure: the reference's next-pool-row rule, the net bytes inside START..END, the pool peak;
# --metric, its older spelling (export's --metric is what a profile weighs), does the same
for m in reference delta peak; do
	expect_status 0 "$M" -q --measure $m --input "$T/compare/metric_base.csv,$T/compare/metric_cmp.csv" -o metric_$m.csv
	expect_same metric_$m.csv "$T/compare/metric_${m}_expected.csv"
	expect_alias 0 --measure=$m --metric=$m --input "$T/compare/metric_base.csv,$T/compare/metric_cmp.csv" -o -
done
# op,kernel is also spelled kernel,op
expect_alias 0 --level=op,kernel --level=kernel,op -q --input "$T/compare/both_base.csv,$T/compare/both_cmp.csv" -o -
expect_status 2 "$M" -q --metric delta --level kernel --input "$T/compare/metric_base.csv,$T/compare/metric_cmp.csv" -o o10.csv
expect_err_line 'the delta and peak metrics need op START and END rows: use the op level$'
expect_absent o10.csv
expect_status 2 "$M" --metric bytes --input "$T/baseline.csv,$T/leaks.csv"
expect_err_line "^memscope-compare: --measure: expected reference, delta or peak, got 'bytes'$"

# --step: the N-th mstx "step start" range, or the span ending at the N-th SYSTEM STEP row
expect_status 0 "$M" -q --step 2 --input "$T/compare/steps_base.csv,$T/compare/steps_cmp.csv" -o steps.csv
expect_same steps.csv "$T/compare/steps_expected.csv"
expect_status 0 "$M" -q --step 2 --input "$T/compare/sysstep_base.csv,$T/compare/sysstep_cmp.csv" -o sys.csv
expect_same sys.csv "$T/compare/sysstep_expected.csv"
# a user's own mstx range inside the step does not end it
expect_status 0 "$M" -q --step 2 --input "$T/compare/steps_base.csv,$T/compare/steps_nested.csv" -o nested.csv
expect_same nested.csv "$T/compare/steps_expected.csv"
expect_status 3 "$M" -q --step 3 --input "$T/compare/steps_base.csv,$T/compare/steps_cmp.csv" -o o8.csv
expect_err_line '^memscope-compare: .*steps_base.csv: no step 3: it has steps 1, 2$'
expect_absent o8.csv
expect_status 3 "$M" -q --step 1 --input "$T/compare/tie_base.csv,$T/compare/tie_cmp.csv" -o o9.csv
expect_err_line 'tie_base.csv: no steps: neither mstx "step start" ranges, SYSTEM STEP rows nor ProfilerStep#N ops$'
expect_status 2 "$M" --step 0 --input "$T/baseline.csv,$T/leaks.csv"
expect_status 2 "$M" --step 2x --input "$T/baseline.csv,$T/leaks.csv"

# where the reference discards the file we give the clean file's answer: CRLF, a BOM, a
# trailing blank line, multi-line call stacks and a quoted comma in every row
awk 'NR == 1 { printf "\357\273\277%s\r\n", $0; next }
	{ sub(/,,$/, ",\"a.py(1): f\r\nb.py(2): g, h\",\"libc.so(x)\r\nlibtorch.so(y)\"");
	  printf "%s\r\n", $0 }
	END { printf "\r\n" }' "$T/baseline.csv" >messy.csv
expect_status 0 "$M" -q --input "messy.csv,$T/leaks.csv" -o messy_out.csv
expect_same messy_out.csv "$T/compare/baseline_vs_leaks_expected.csv"

# hostile sizes (INT64_MAX, negative) wrap instead of overflowing (the sanitizer build aborts on
# undefined behaviour); a name with a comma is quoted; unmatched START/END rows are reported
for m in reference delta peak; do
	expect_status 0 "$M" -q --metric $m --input "$T/compare/hostile_base.csv,$T/compare/hostile_cmp.csv" -o hostile_$m.csv
	grep -q '^OP_LAUNCH,"a,b",0,' hostile_$m.csv && ok || bad "quoted name ($m): $(cat hostile_$m.csv)"
done
expect_err_line '^memscope-compare: 1 op END rows had no START \(counted 0\), 1 STARTs no END$'

# the default output path, as the reference names it
expect_status 0 "$M" -q --input "$T/baseline.csv,$T/leaks.csv" --output-dir res
ls res/memscopeDumpResults/compare/memory_compare_[0-9]*.csv >/dev/null 2>&1 && ok || bad "default output path"
# runs in the same second never collide and never overwrite: the first keeps the reference's
# name, later ones add _2, _3, ... (a name taken by any file is skipped, here a file of the user's)
D=seq/memscopeDumpResults/compare
mkdir -p "$D"
n=0
while [ "$(date +%N | cut -c1)" -gt 2 ] && [ $n -lt 100 ]; do sleep 0.05; n=$((n + 1)); done
S=$(date +%Y%m%d%H%M%S)
echo mine >"$D/memory_compare_${S}_2.csv"
for i in 1 2 3 4; do
	expect_status 0 "$M" -q --input "$T/baseline.csv,$T/leaks.csv" --output-dir seq
done
printf '%s\n' "memory_compare_$S.csv" "memory_compare_${S}_2.csv" "memory_compare_${S}_3.csv" \
	"memory_compare_${S}_4.csv" "memory_compare_${S}_5.csv" >seq_want
ls "$D" >seq_got
expect_same seq_got seq_want
[ "$(cat "$D/memory_compare_${S}_2.csv")" = mine ] && ok || bad "a file at a default name was overwritten"
for f in "$S" "${S}_3" "${S}_4" "${S}_5"; do
	expect_same "$D/memory_compare_$f.csv" "$T/compare/baseline_vs_leaks_expected.csv"
done
# ... and so do runs at the same time: four at once, each its own complete file
pids=
for i in 1 2 3 4; do
	"$M" -q --input "$T/baseline.csv,$T/leaks.csv" --output-dir conc 2>"conc_err$i" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p" && ok || bad "a concurrent run failed: $(cat conc_err*)"
done
[ "$(ls -A conc/memscopeDumpResults/compare | wc -l)" -eq 4 ] && ok || bad "concurrent runs: $(ls -A conc/memscopeDumpResults/compare)"
for f in conc/memscopeDumpResults/compare/*; do
	expect_same "$f" "$T/compare/baseline_vs_leaks_expected.csv"
done
# a failed run leaves neither its reserved name nor a temporary file in an existing directory
before=$(ls -A "$D")
expect_status 3 "$M" -q --level kernel --input "$T/baseline.csv,$T/leaks.csv" --output-dir seq
[ "$(ls -A "$D")" = "$before" ] && ok || bad "a failed run left: $(ls -A "$D")"
expect_status 3 "$M" -q --step 9 --input "$T/compare/steps_base.csv,$T/compare/steps_cmp.csv" --output-dir seq
[ "$(ls -A "$D")" = "$before" ] && ok || bad "a failed run left: $(ls -A "$D")"
# the commit replaces exactly the reserved placeholder: a file put there meanwhile by someone else
# stays and fails the run (also where renameat2 has no RENAME_EXCHANGE); a placeholder removed
# meanwhile is no obstacle
FAULT="$BIN/../tests/libfault_inject.so"
# (a sanitizer build's runtime then comes after the injector: fine for this test)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export ASAN_OPTIONS
R=race/memscopeDumpResults/compare
# slow_run ENV...: a run whose commit waits 0.8 s in the background (pid in $pid), once it has
# reserved its name (in $ph)
slow_run() {
	rm -rf race
	env "$@" LD_PRELOAD="$FAULT" MEMSCOPE_FAULT_DELAY_MS=800 "$M" -q \
		--input "$T/baseline.csv,$T/leaks.csv" --output-dir race 2>race.err &
	pid=$!
	n=0
	while [ -z "$(ls "$R"/*.tmp.* 2>/dev/null)" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	sleep 0.1
	ph=$(ls "$R"/memory_compare_*.csv)
}
if [ -f "$FAULT" ]; then
	for fs in MEMSCOPE_FAULT_NONE=1 MEMSCOPE_FAULT_NOREPLACE=1; do
		slow_run $fs
		echo other >race.new && mv race.new "$ph"
		wait $pid
		[ $? -eq 2 ] && grep -q 'exists: written by another run meanwhile' race.err && ok || bad "placeholder replaced ($fs): $(cat race.err)"
		[ "$(cat "$ph")" = other ] && [ "$(ls -A $R | wc -l)" -eq 1 ] && ok || bad "placeholder replaced ($fs): $(ls -A $R)"
		slow_run $fs
		rm "$ph"
		wait $pid && ok || bad "placeholder removed ($fs): $(cat race.err)"
		expect_same "$ph" "$T/compare/baseline_vs_leaks_expected.csv"
		[ "$(ls -A $R | wc -l)" -eq 1 ] && ok || bad "placeholder removed ($fs): $(ls -A $R)"
	done
else
	bad "no fault injector at $FAULT (build the fault_inject target)"
fi

# the summary on stderr: first the op names whose own allocations differ most (each op's own
# MALLOCs and FREEs between its START and END on its thread), in binary units with their CSV
# lines; per device what matched and what the ops allocated, each byte once; what the CSV's
# values (the reference's rule) are, with its largest difference, which randn did not allocate
cat >summary_want <<'SUM'
memscope-compare: torch._ops.aten._to_copy.default allocated 7.63 MiB more in compare than in base, on device 0 (2 ops only in compare, 3.81 MiB each; lines 24, 46 of standard output hold msMemScope's figures)
memscope-compare: device 0: 40 ops in both inputs, 0 only in base, 4 only in compare; ops allocated 7.63 MiB more in compare than in base, each allocation counted once
memscope-compare: what an op allocated: the bytes of the framework pools (PTA, ATB, MindSpore, CUDA_CACHING) it allocated minus freed between its START and END, on its thread, outside the ops nested in it
memscope-compare: the CSV's values are msMemScope's: the size of the first framework-pool row at or after each op, often a later op's allocation (line 23 of standard output: +3.81 MiB at torch._ops.aten.randn.default, which itself allocated 0 B more)
memscope-compare: 44 rows -> standard output
SUM
expect_status 0 "$M" --input "$T/baseline.csv,$T/leaks.csv" -o -
expect_same "$WORK/err" summary_want
expect_same "$WORK/out" "$T/compare/baseline_vs_leaks_expected.csv"
# ... whatever the CSV's values are
for m in delta peak; do
	expect_status 0 "$M" --measure $m --input "$T/baseline.csv,$T/leaks.csv" -o sample_$m.csv
	head -n 2 "$WORK/err" >sample_$m.err
	head -n 2 summary_want | sed "s/standard output/sample_$m.csv/; s/msMemScope.s figures/--measure $m's figures/" >sample_$m.want
	expect_same sample_$m.err sample_$m.want
done
# ranked by what each op allocated (own: 2 KiB, freed right after its END; next: 3 MiB), not by
# the reference's values (before: charged next's 3 MiB; next: charged lone's 512 B); an END
# without its START (lone) allocated an unknown amount; own's free and lone's 512 B come after
# every op
HDR='ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)'
printf '%s\n' "$HDR" '1,OP_LAUNCH,ATEN_START,own,10,1,1,0,N/A,,,' '2,OP_LAUNCH,ATEN_END,own,20,1,1,0,N/A,,,' \
	'3,OP_LAUNCH,ATEN_START,before,30,1,1,0,N/A,,,' '4,OP_LAUNCH,ATEN_END,before,40,1,1,0,N/A,,,' \
	'5,OP_LAUNCH,ATEN_START,next,50,1,1,0,N/A,,,' '6,OP_LAUNCH,ATEN_END,next,60,1,1,0,N/A,,,' \
	'7,OP_LAUNCH,ATEN_END,lone,70,1,1,0,N/A,,,' >sum_base.csv
printf '%s\n' "$HDR" '1,OP_LAUNCH,ATEN_START,own,10,1,1,0,N/A,,,' \
	'2,MALLOC,PTA,N/A,15,1,1,0,0x10,"{allocation_id:1,addr:0x10,size:2048,total:8192,used:2048}",,' \
	'3,OP_LAUNCH,ATEN_END,own,20,1,1,0,N/A,,,' \
	'4,FREE,PTA,N/A,25,1,1,0,0x10,"{allocation_id:1,addr:0x10,size:2048,total:8192,used:0}",,' \
	'5,OP_LAUNCH,ATEN_START,before,30,1,1,0,N/A,,,' '6,OP_LAUNCH,ATEN_END,before,40,1,1,0,N/A,,,' \
	'7,OP_LAUNCH,ATEN_START,next,50,1,1,0,N/A,,,' \
	'8,MALLOC,PTA,N/A,55,1,1,0,0x20,"{allocation_id:2,addr:0x20,size:3145728,total:8388608,used:3145728}",,' \
	'9,OP_LAUNCH,ATEN_END,next,60,1,1,0,N/A,,,' '10,OP_LAUNCH,ATEN_END,lone,70,1,1,0,N/A,,,' \
	'11,MALLOC,PTA,N/A,80,1,1,0,0x30,"{allocation_id:3,addr:0x30,size:512,total:8388608,used:3146240}",,' >sum_cmp.csv
cat >sum_want <<'SUM'
memscope-compare: next allocated 3.00 MiB more in compare than in base, on device 0 (1 op in both; line 5 of sum.csv holds msMemScope's figures)
memscope-compare: own allocated 2.00 KiB more in compare than in base, on device 0 (1 op in both; line 3 of sum.csv holds msMemScope's figures)
memscope-compare: device 0: 4 ops in both inputs, 0 only in base, 0 only in compare; ops allocated 3.00 MiB more in compare than in base, each allocation counted once; 1 unknown (an op END without its START)
memscope-compare: outside every op: 1.50 KiB less in compare than in base (pool rows made while no op ran on their thread)
memscope-compare: what an op allocated: the bytes of the framework pools (PTA, ATB, MindSpore, CUDA_CACHING) it allocated minus freed between its START and END, on its thread, outside the ops nested in it
memscope-compare: the CSV's values are msMemScope's: the size of the first framework-pool row at or after each op, often a later op's allocation (line 4 of sum.csv: +3.00 MiB at before, which itself allocated 0 B more)
memscope-compare: 4 rows -> sum.csv
SUM
expect_status 0 "$M" --input sum_base.csv,sum_cmp.csv -o sum.csv
expect_same "$WORK/err" sum_want
# the same pair by delta: the same findings, its own meaning line, the unmatched END reported
expect_status 0 "$M" --measure delta --input sum_base.csv,sum_cmp.csv -o sum_delta.csv
sed 's/sum.csv/sum_delta.csv/; s/msMemScope.s figures/--measure delta'"'"'s figures/; s/^memscope-compare: the CSV.s values are .*/memscope-compare: the CSV'"'"'s values (--measure delta): what each op allocated with the ops nested in it/' sum_want >sum_delta_want
echo 'memscope-compare: 2 op END rows had no START (counted 0), 0 STARTs no END' >>sum_delta_want
expect_same "$WORK/err" sum_delta_want
# nested ops: what inner allocated counts once, not again in outer that ran it (the CSV's delta
# values count it in both: 80 and 80)
expect_status 0 "$M" --measure delta --input "$T/compare/metric_base.csv,$T/compare/metric_cmp.csv" -o nest.csv
expect_same nest.csv "$T/compare/metric_delta_expected.csv"
grep -Fqx 'memscope-compare: inner allocated 80 B more in compare than in base, on device 0 (1 op in both; line 3 of nest.csv holds --measure delta'"'"'s figures)' "$WORK/err" &&
	grep -Fqx 'memscope-compare: device 0: 2 ops in both inputs, 0 only in base, 0 only in compare; ops allocated 80 B more in compare than in base, each allocation counted once' "$WORK/err" &&
	[ "$(grep -c 'allocated' "$WORK/err")" -eq 4 ] &&
	ok || bad "nested summary: $(cat "$WORK/err")"
# a thread's allocations are not charged to an op of another thread running meanwhile
printf '%s\n' "$HDR" '1,OP_LAUNCH,ATEN_START,fwd,10,1,1,0,N/A,,,' '2,OP_LAUNCH,ATEN_END,fwd,20,1,1,0,N/A,,,' >thr_base.csv
printf '%s\n' "$HDR" '1,OP_LAUNCH,ATEN_START,fwd,10,1,1,0,N/A,,,' \
	'2,MALLOC,PTA,N/A,15,1,2,0,0x10,"{allocation_id:1,addr:0x10,size:4096,total:8192,used:4096}",,' \
	'3,OP_LAUNCH,ATEN_END,fwd,20,1,1,0,N/A,,,' >thr_cmp.csv
expect_status 0 "$M" --input thr_base.csv,thr_cmp.csv -o thr.csv
head -n 1 "$WORK/err" | grep -Fqx 'memscope-compare: no op allocated a different amount in compare than in base' &&
	grep -Fqx 'memscope-compare: outside every op: 4.00 KiB more in compare than in base (pool rows made while no op ran on their thread)' "$WORK/err" &&
	ok || bad "other thread: $(cat "$WORK/err")"
# the kernel level: the reference's values, the finding first, what they are after
expect_status 0 "$M" --level kernel -o k.csv \
	--input "$T/memscope_dump_20250428113810.csv,$T/memscope_dump_20250428113811.csv"
cat >k_want <<'SUM'
memscope-compare: kernel N/A differs by -512 B between base and compare, on device 0 (2 kernel launches: 1 in both, 1 only in base, from -18.5 KiB to +18.0 KiB; lines 7, 8 of k.csv)
memscope-compare: kernel N/A differs by -512 B between base and compare, on device 1 (1 kernel launch only in base; line 14 of k.csv)
memscope-compare: device 0: 5 kernel launches in both inputs, 1 only in base, 0 only in compare
memscope-compare: device 1: 5 kernel launches in both inputs, 1 only in base, 0 only in compare
memscope-compare: these values are msMemScope's, as in the CSV: the size of the first framework-pool row at or after each element, often a later element's allocation (a kernel launch has no start and end, so what it allocated itself cannot be told)
memscope-compare: 12 rows -> k.csv
SUM
expect_same "$WORK/err" k_want

# Ascend profiler outputs (formats/msprof.md "What the tools do with them"): no msMemScope
# output to agree with, so --measure delta is the default there, said in one line. Two copies of
# a real torch_npu output, two aten::mm blocks doubled in the second: only those aten::mm ops and
# the ops they ran in (on their thread) differ, each by the bytes added; the oracle finds them in
# the timeline itself. (The reference's rule charged each block to the 5 ops before it; the time
# rule alone also charged empty_tensor, which aten::mm runs while it allocates.)
P="$T/msprof/torch_npu_level0_rank0_ascend_pt"
OM=ASCEND_PROFILER_OUTPUT/operator_memory.csv
cp -r "$P" rankA_ascend_pt && cp -r "$P" rankB_ascend_pt
awk -F, -v OFS=, '$1 == "aten::mm" && ($2 == "16000.5" || $2 == "65536.5") { $2 = $2 * 2 } 1' \
	"$P/$OM" >"rankB_ascend_pt/$OM"
expect_status 0 "$M" --input rankA_ascend_pt,rankB_ascend_pt -o prof.csv
[ "$(grep -c 'msMemScope does not compare' "$WORK/err")" -eq 1 ] &&
	grep -Fqx "memscope-compare: rankA_ascend_pt, rankB_ascend_pt: Ascend profiler data, which msMemScope does not compare: the CSV's values by --measure delta, what each op allocated minus freed with the ops nested in it (--measure reference for msMemScope's rule)" "$WORK/err" &&
	ok || bad "the default's line: $(cat "$WORK/err")"
grep -q "^memscope-compare: the CSV's values (--measure delta)" "$WORK/err" && ok || bad "profiler summary: $(cat "$WORK/err")"
# the first line names aten::mm, the op that allocated; the total counts each block once (not
# again in the ops aten::mm ran in: +239 MiB before)
head -n 1 "$WORK/err" | grep -Fqx 'memscope-compare: aten::mm allocated 79.6 MiB more in compare than in base, on device 0 (2 ops in both, from +15.6 MiB to +64.0 MiB; lines 245, 302 of prof.csv hold --measure delta'"'"'s figures)' &&
	grep -Fq '; ops allocated 79.6 MiB more in compare than in base, each allocation counted once' "$WORK/err" &&
	ok || bad "profiler findings: $(cat "$WORK/err")"
python3 - "$P" prof.csv >prof_check <<'PY'
import csv, json, sys
from decimal import Decimal
out = sys.argv[1] + "/ASCEND_PROFILER_OUTPUT/"
ns = lambda t: int(Decimal(t.strip()) * 1000)
sl = [(ns(e["ts"]), ns(e["ts"]) + ns(str(e["dur"])), e["name"], e["pid"], e["tid"])
      for e in json.load(open(out + "trace_view.json"))
      if e.get("ph") == "X" and e.get("cat") == "cpu_op" and not e["name"].startswith("ProfilerStep#")]
want = []
for r in csv.DictReader(open(out + "operator_memory.csv", newline="")):
	if r["Name"] != "aten::mm" or r["Size(KB)"] not in ("16000.5", "65536.5"):
		continue
	t, added = ns(r["Allocation Time(us)"]), int(Decimal(r["Size(KB)"]) * 1024)
	mm = max((s for s in sl if s[2] == "aten::mm" and s[0] <= t <= s[1]), key=lambda s: s[0])
	want += ["%s %d" % (s[2], added) for s in sl
		 if s[3:] == mm[3:] and s[0] <= mm[0] and s[1] >= mm[1]]
rows = list(csv.reader(open(sys.argv[2])))[2:]
got = ["%s %s" % (r[1], r[5]) for r in rows if r[5] != "0"]
print("ok" if sorted(got) == sorted(want) and len(want) > 2 else "want %s got %s" % (sorted(want), sorted(got)))
PY
[ "$(cat prof_check)" = ok ] && ok || bad "profiler delta rows: $(cat prof_check)"
# -q says nothing; --measure reference keeps msMemScope's rule (and says nothing of the default)
expect_status 0 "$M" -q --input rankA_ascend_pt,rankB_ascend_pt -o prof_q.csv
[ ! -s "$WORK/err" ] && ok || bad "-q: $(cat "$WORK/err")"
expect_same prof_q.csv prof.csv
expect_status 0 "$M" --measure reference --input rankA_ascend_pt,rankB_ascend_pt -o prof_ref.csv
grep -q "^memscope-compare: the CSV's values are msMemScope's" "$WORK/err" && ! grep -q 'does not compare' "$WORK/err" &&
	ok || bad "reference on profiler: $(cat "$WORK/err")"
# a MALLOC that names its op (a profiler output's, or its dump) counts for that op and the ops it
# ran in on its thread: not for an op it runs meanwhile (C), nor one on another thread (B); one
# naming an op not running then counts by time, and is reported. Its FREE counts by time.
expect_status 0 "$M" --input "$T/compare/named_base.csv,$T/compare/named_cmp.csv" -o named.csv
expect_same named.csv "$T/compare/named_expected.csv"
grep -q '^memscope-compare: 2 MALLOCs name an op that was not running in their process then: counted for the op running then$' "$WORK/err" &&
	ok || bad "named summary: $(cat "$WORK/err")"
# ... and MindSpore's at the op level (refused for msMemScope's dumps, as the reference does)
sed 's/,PTA,/,MINDSPORE,/' "$T/compare/named_base.csv" >ms_named_base.csv
sed 's/,PTA,/,MINDSPORE,/' "$T/compare/named_cmp.csv" >ms_named_cmp.csv
expect_status 0 "$M" -q --input ms_named_base.csv,ms_named_cmp.csv -o ms_named.csv
expect_same ms_named.csv "$T/compare/named_expected.csv"
# what a profiler output lacks, in its terms: a timeline with op slices, a device for its ops
# (a timeline alone), kernel launches; an error (nothing can match)
Q="$T/msprof-quirks"
NO_TL='this output has no timeline \(trace_view.json / msprof_\*.json\) with op slices \(cpu_op\), which the op sequence comes from'
expect_status 3 "$M" -q --input "$Q/crlf_lf_rank0_ascend_pt,$Q/crlf_lf_rank0_ascend_pt" -o o11.csv
expect_err_line "^memscope-compare: $Q/crlf_lf_rank0_ascend_pt: $NO_TL$"
expect_absent o11.csv
expect_status 3 "$M" -q --input "$Q/crlf_lf_rank0_ascend_pt,$P" -o o11.csv
expect_err_line "^memscope-compare: $Q/crlf_lf_rank0_ascend_pt: $NO_TL$"
expect_absent o11.csv
expect_status 3 "$M" -q --input "$Q/rank0_ascend_ms,$Q/rank0_ascend_ms" -o o12.csv
expect_err_line "^memscope-compare: $Q/rank0_ascend_ms: $NO_TL$"
TV="$P/ASCEND_PROFILER_OUTPUT/trace_view.json"
expect_status 3 "$M" -q --input "$TV,$TV" -o o13.csv
expect_err_line "^memscope-compare: $TV: its op slices have no device, which comes from the output's memory files: give the output folder, not its timeline alone$"
expect_status 3 "$M" -q --level kernel --input "$P,$P" -o o14.csv
expect_err_line "^memscope-compare: $P: an Ascend profiler output has no kernel launches, which the kernel level compares: compare its ops \(--level op\)$"
expect_status 3 "$M" -q --level kernel --input "$Q/crlf_lf_rank0_ascend_pt,$P" -o o15.csv
expect_err_line "kernel level compares: and this one has no timeline \(trace_view.json / msprof_\*.json\) with op slices \(cpu_op\) to compare ops$"
expect_absent o15.csv

# bad input: one line naming the file, exit 3 (4 for I/O, 2 for usage), nothing at the output
expect_status 4 "$M" --input "missing.csv,$T/leaks.csv" -o o1.csv
expect_err_line '^memscope-compare: missing.csv: cannot open: No such file or directory$'
expect_absent o1.csv
printf 'time,name\n1,a\n' >wrong.csv
expect_status 3 "$M" --input "wrong.csv,$T/leaks.csv" -o o2.csv
expect_err_line "^memscope-compare: wrong.csv: not a capture file, .* or a memscope_dump CSV$"
expect_absent o2.csv
{ head -n 3 "$T/baseline.csv"; echo '9,MALLOC,PTA,N/A,5,1,1,0,0x1,"{size:x}",,'; } >badrow.csv
expect_status 3 "$M" --input "badrow.csv,$T/leaks.csv" -o o3.csv
expect_err_line '^memscope-compare: badrow.csv:4: invalid size "x"$'
expect_absent o3.csv
expect_status 3 "$M" --input "$T/compare/mixed_pools.csv,$T/leaks.csv" --level kernel -o o4.csv
expect_err_line 'mixed_pools.csv:5: MINDSPORE pool row in a PTA comparison'
expect_absent o4.csv
expect_status 3 "$M" --input "$T/compare/ms_base.csv,$T/compare/ms_cmp.csv" -o o5.csv
expect_err_line 'op-level comparison of MindSpore data is not supported'
expect_absent o5.csv
expect_status 3 "$M" --level kernel --input "$T/baseline.csv,$T/leaks.csv" -o o6.csv
expect_err_line "^memscope-compare: $T/baseline.csv, $T/leaks.csv: neither input has KERNEL_LAUNCH rows of a numbered device, which the kernel level compares; both have op END rows \(ATEN_END, ATB_END\): compare those with --level op$"
expect_absent o6.csv
# inputs that share nothing: one line saying why and what would work, exit 3, no output (the
# legacy samples at the op level have kernel launches only; a current dump against a legacy one
# has no level in common; inputs on different devices; ops of different names)
L0="$T/memscope_dump_20250428113810.csv"
L1="$T/memscope_dump_20250428113811.csv"
expect_status 3 "$M" --input "$L0,$L1" -o o16.csv
expect_err_line "^memscope-compare: $L0, $L1: neither input has op END rows \(ATEN_END, ATB_END\) of a numbered device, which the op level compares; both have KERNEL_LAUNCH rows: compare those with --level kernel$"
expect_absent o16.csv
expect_status 3 "$M" --input "$T/baseline.csv,$L1" -o o17.csv
expect_err_line "^memscope-compare: $L1: no op END rows \(ATEN_END, ATB_END\) of a numbered device, which the op level compares: nothing to compare $T/baseline.csv's 40 ops with; it has KERNEL_LAUNCH rows, but $T/baseline.csv has none: no level has elements in both inputs$"
expect_absent o17.csv
expect_status 3 "$M" --level kernel --input "$T/baseline.csv,$L1" -o o18.csv
expect_err_line "^memscope-compare: $T/baseline.csv: no KERNEL_LAUNCH rows of a numbered device, which the kernel level compares: nothing to compare $L1's 10 kernel launches with; it has op END rows \(ATEN_END, ATB_END\), but $L1 has none: no level has elements in both inputs$"
expect_absent o18.csv
awk -F, -v OFS=, 'NR > 1 && $8 == "0" { $8 = 1 } 1' "$T/leaks.csv" >leaks_dev1.csv
expect_status 3 "$M" --input "$T/baseline.csv,leaks_dev1.csv" -o o19.csv
expect_err_line "^memscope-compare: $T/baseline.csv, leaks_dev1.csv: the inputs share no device: the ops of the first are on device 0, those of the second on device 1$"
expect_absent o19.csv
sed 's/torch\._ops\.//g' "$T/leaks.csv" >leaks_renamed.csv
expect_status 3 "$M" --input "$T/baseline.csv,leaks_renamed.csv" -o o20.csv
expect_err_line "^memscope-compare: $T/baseline.csv, leaks_renamed.csv: no name is in both inputs \(40 ops such as 'torch._ops.aten.t.default', 44 such as 'aten.t.default'\): different programs, or recorders that name them differently$"
expect_absent o20.csv
expect_status 3 "$M" --input "$T/msprof/torch_npu_level0_rank0_ascend_pt,$T/leaks.csv" -o o22.csv
expect_err_line "no name is in both inputs \(859 ops such as 'aten::empty', 44 such as 'torch._ops.aten.t.default'\): an Ascend profiler output names its ops as the profiler does \(aten::mm\), an msMemScope dump as torch does \(torch._ops.aten.mm.default\): compare two profiler outputs or two dumps$"
expect_absent o22.csv
# ... where only a part matches, the rest is compared and the summary says what did not match
{ cat "$T/leaks.csv"; awk -F, -v OFS=, 'NR > 1 && $3 ~ /^ATEN_/ && $8 == "0" { $8 = 3; print }' "$T/leaks.csv"; } >leaks_dev3.csv
expect_status 0 "$M" --input "$T/baseline.csv,leaks_dev3.csv" -o o21.csv
grep -Fqx 'memscope-compare: device 3: no ops in both inputs (0 only in base, 44 only in compare): nothing to compare them with' "$WORK/err" &&
	head -n 1 "$WORK/err" | grep -q '^memscope-compare: torch._ops.aten._to_copy.default allocated 7.63 MiB more' &&
	ok || bad "partial match: $(cat "$WORK/err")"
# ... and a failed run leaves no directories behind at the default path
expect_status 3 "$M" --level kernel --input "$T/baseline.csv,$T/leaks.csv" --output-dir fresh
[ ! -e fresh ] && ok || bad "directories left behind: $(find fresh 2>&1)"
expect_status 2 "$M" --input "$T/baseline.csv" -o o7.csv
expect_err_line 'expected exactly two files'
expect_status 2 "$M" --input "a.csv,b.csv,c.csv"
expect_status 2 "$M" --level warp --input "$T/baseline.csv,$T/leaks.csv"
expect_err_line "^memscope-compare: --level: expected op, kernel or op,kernel, got 'warp'$"
expect_status 2 "$M" "$T/baseline.csv"
cp "$T/baseline.csv" base.csv
expect_status 2 "$M" -f --input "base.csv,$T/leaks.csv" -o base.csv
expect_err_line 'output would overwrite the input'
expect_same base.csv "$T/baseline.csv"
# a CUDA input's framework pool is CUDA_CACHING, PyTorch's caching allocator (a snapshot's
# blocks): the op's own bytes (delta), its peak from the live blocks (a snapshot has no `used`),
# the next block's size (reference); not a table of zeros
H='ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)'
cat >cuda_base.csv <<ROWS
$H
1,OP_LAUNCH,ATEN_START,Optimizer.step,1000,1,1,0,N/A,,,
2,MALLOC,CUDA_CACHING,N/A,1100,1,1,0,0x1000,"{size:1024,stream:0}",,
3,FREE,CUDA_CACHING,N/A,1200,1,1,0,0x1000,"{size:1024,stream:0}",,
4,OP_LAUNCH,ATEN_END,Optimizer.step,1300,1,1,0,N/A,,,
5,MALLOC,CUDA_CACHING,N/A,1400,1,1,0,0x9000,"{size:512,stream:0}",,
ROWS
cat >cuda_cmp.csv <<ROWS
$H
1,OP_LAUNCH,ATEN_START,Optimizer.step,1000,1,1,0,N/A,,,
2,MALLOC,CUDA_CACHING,N/A,1100,1,1,0,0x1000,"{size:4096,stream:0}",,
3,MALLOC,CUDA_CACHING,N/A,1150,1,1,0,0x2000,"{size:2048,stream:0}",,
4,FREE,CUDA_CACHING,N/A,1200,1,1,0,0x1000,"{size:4096,stream:0}",,
5,OP_LAUNCH,ATEN_END,Optimizer.step,1300,1,1,0,N/A,,,
6,MALLOC,CUDA_CACHING,N/A,1400,1,1,0,0x9000,"{size:512,stream:0}",,
ROWS
for mv in reference:512,512,0 delta:0,2048,2048 peak:1024,6144,5120; do
	m=${mv%%:*}
	expect_status 0 "$M" -q --measure $m --input cuda_base.csv,cuda_cmp.csv -o -
	grep -qx "OP_LAUNCH,Optimizer.step,0,${mv#*:}" "$WORK/out" && ok || bad "CUDA_CACHING $m: $(cat "$WORK/out")"
done
expect_status 0 "$M" --input cuda_base.csv,cuda_cmp.csv -o cuda.csv
head -n 1 "$WORK/err" | grep -Fqx 'memscope-compare: Optimizer.step allocated 2.00 KiB more in compare than in base, on device 0 (1 op in both; line 3 of cuda.csv holds msMemScope'"'"'s figures)' &&
	grep -q 'framework pools (PTA, ATB, MindSpore, CUDA_CACHING)' "$WORK/err" && ok || bad "CUDA_CACHING summary: $(cat "$WORK/err")"
# ... inputs without any framework-pool row: refused, not a table of zeros (nothing on stdout)
grep -v CUDA_CACHING cuda_base.csv >nopool_base.csv
grep -v CUDA_CACHING cuda_cmp.csv >nopool_cmp.csv
expect_status 3 "$M" --input nopool_base.csv,nopool_cmp.csv -o -
expect_err_line '^memscope-compare: nopool_base.csv, nopool_cmp.csv: neither input has framework-pool rows \(PTA, ATB, MINDSPORE or CUDA_CACHING\) of a numbered device: every op would be valued 0$'
[ ! -s "$WORK/out" ] && ok || bad "no-pool refusal wrote: $(cat "$WORK/out")"
# a comparison that fails writes nothing to standard output either (decided before writing);
# one op is "1 op"
sed 's/ATEN_END/KERNEL_LAUNCH/; /ATEN_START/d' cuda_cmp.csv >kernels_cmp.csv
expect_status 3 "$M" --input cuda_base.csv,kernels_cmp.csv -o -
expect_err_line "^memscope-compare: kernels_cmp.csv: no op END rows \(ATEN_END, ATB_END\) of a numbered device, which the op level compares: nothing to compare cuda_base.csv's 1 op with"
[ ! -s "$WORK/out" ] && ok || bad "failed comparison wrote to stdout: $(cat "$WORK/out")"
# a file compared with itself, by any name, is said
ln -s cuda_base.csv same_link.csv
expect_status 0 "$M" -q --input cuda_base.csv,same_link.csv -o -
expect_err_line '^memscope-compare: warning: cuda_base.csv and same_link.csv are the same file, compared with itself: give two different inputs$'
# the two inputs go in one argument, separated by a comma
expect_status 2 "$M" --input cuda_base.csv cuda_cmp.csv -o -
expect_err_line "^memscope-compare: --input: expected exactly two files separated by a comma, BASE,COMPARE \(no space after the comma unless quoted\): 'cuda_base.csv'$"
# a folder of several inputs is one line, not the notes about its files first
mkdir -p several/sub && cp cuda_base.csv cuda_cmp.csv several/ &&
	cp "$T/msprof-quirks/bad_fields/operator_memory.csv" several/sub/
expect_status 2 "$M" --input several,cuda_cmp.csv -o -
expect_err_line '^memscope-compare: several: a folder of 2 inputs \(several/cuda_base.csv, \.\.\.\), read here as one input: give one of them$'
finish
