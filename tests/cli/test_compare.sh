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
expect_err_line '^memscope-compare: .*steps_base.csv: no step 3: it has 2$'
expect_absent o8.csv
expect_status 3 "$M" -q --step 1 --input "$T/compare/tie_base.csv,$T/compare/tie_cmp.csv" -o o9.csv
expect_err_line 'tie_base.csv: no steps: neither mstx "step start" ranges nor SYSTEM STEP rows$'
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
# summary on stderr, figures per device
expect_status 0 "$M" --input "$T/baseline.csv,$T/leaks.csv" -o - 
grep -q '^memscope-compare: device 0: 40 matched, 0 base-only, 4 compare-only, diff +24000000 bytes$' "$WORK/err" && ok || bad "summary: $(cat "$WORK/err")"

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
expect_err_line 'no KERNEL_LAUNCH rows on any device: nothing to compare$'
expect_absent o6.csv
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
finish
