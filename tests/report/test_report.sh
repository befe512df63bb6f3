#!/bin/sh
# memscope-report's page opened in headless Chromium and checked by check_report.py, one kind of
# input per run: its verdicts against the JSON of memscope-leaks, memscope-batch and
# memscope-inefficient on the same inputs, the page against memscope-report --format json, no
# console error, a click on a leak site showing its stack; the screenshots (what Chromium drew,
# and after the click) kept in OUT_DIR/screenshots for a person to look at.
# KIND: samples (testdata/leaks.csv, with --baseline testdata/baseline.csv, and the stepped
# dumps of testdata/leaks/), msprof (the real profiler folders of testdata/msprof), snapshot (a
# PyTorch snapshot of tests/gpu/make_snapshot.py), record (memscope-record of the steps victim:
# EXTRA is the victims' folder), ranks64 (the 64-rank tree of gen_ranks: EXTRA is gen_ranks),
# clocks (a profiler folder whose files were recorded 342 days apart: the clock warning).
# Exit 77 (skipped) when chromium is not installed.
# Args: BIN_DIR SRC_DIR OUT_DIR KIND [EXTRA]
if ! command -v chromium >/dev/null 2>&1; then
	echo "SKIP: chromium is not installed (tests/install-deps.sh installs it)"
	exit 77
fi
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
mkdir -p "$3/screenshots" || exit 1
SHOTS=$(cd "$3/screenshots" && pwd)
KIND=$4
EXTRA=''
[ -n "${5:-}" ] && EXTRA=$(cd "$(dirname "$5")" && pwd)/$(basename "$5")
. "$SRC/tests/cli/lib.sh"
T=$SRC/testdata
# the scripts import make_snapshot.py: no __pycache__ written into the source tree
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
cd "$WORK" || exit 1

# page NAME INPUT...: memscope-report of the inputs as a page and as JSON (options $ROPTS, exit
# status one of $WANT), memscope-leaks (on $LEAKS_IN when set), memscope-batch (and
# memscope-inefficient with INEFF=1) on the same inputs (options $TOPTS), then check_report.py
# on the page with the screenshot SHOTS/NAME.png and options $COPTS (and a baseline verdict
# that says $BASE_HAS when set)
page() {
	name=$1
	shift
	# shellcheck disable=SC2086 # the option lists split on purpose
	report_status "$BIN/memscope-report" -q $ROPTS -o "$name.html" "$@"
	cp "$WORK/err" "$name.err"
	# shellcheck disable=SC2086
	report_status "$BIN/memscope-report" -q $ROPTS --format json -o "$name.json" "$@"
	if [ ! -s "$name.html" ] || [ ! -s "$name.json" ]; then
		bad "$name: no page or no JSON written ($(head -c 300 "$name.err"))"
		return
	fi
	# $LEAKS_IN: the inputs memscope-leaks can read, when not all
	# shellcheck disable=SC2086
	if [ -n "$LEAKS_IN" ]; then
		"$BIN/memscope-leaks" -q $TOPTS --format json -o "$name.leaks.json" $LEAKS_IN
	else
		"$BIN/memscope-leaks" -q $TOPTS --format json -o "$name.leaks.json" "$@"
	fi 2>"$name.leaks.err" || bad "$name: memscope-leaks: $(head -3 "$name.leaks.err")"
	# shellcheck disable=SC2086
	"$BIN/memscope-batch" -q $TOPTS --format json -o "$name.batch.json" "$@" 2>"$name.batch.err"
	if [ "${INEFF:-0}" = 1 ]; then
		# shellcheck disable=SC2086
		"$BIN/memscope-inefficient" -q $TOPTS --format json -o "$name.ineff.json" "$@" ||
			bad "$name: memscope-inefficient failed"
	fi
	set -- --json "$name.json" --batch "$name.batch.json" --screenshot "$SHOTS/$name.png"
	[ -s "$name.leaks.json" ] && set -- "$@" --leaks "$name.leaks.json"
	[ -s "$name.ineff.json" ] && set -- "$@" --inefficient "$name.ineff.json"
	[ -n "$BASE_HAS" ] && set -- "$@" --has baseline "$BASE_HAS"
	# shellcheck disable=SC2086
	if python3 "$SRC/tests/report/check_report.py" "$name.html" "$@" $COPTS >"$name.check" 2>&1; then
		ok
		echo "$name: $(tail -1 "$name.check")"
	else
		bad "$name: $(cat "$name.check")"
	fi
}

# report_status CMD...: CMD exits with one of $WANT (0 unless set: 1 only when asked)
report_status() {
	"$@" >"$WORK/out" 2>"$WORK/err"
	got=$?
	case " $WANT " in
	*" $got "*) ok ;;
	*) bad "exit $got, wanted $WANT: $* ($(head -c 300 "$WORK/err"))" ;;
	esac
}

ROPTS='' TOPTS='' COPTS='' WANT=0 INEFF=0 LEAKS_IN='' BASE_HAS=''
case $KIND in
samples)
	# the quick start's pair: the run's leak named first, the baseline beside it
	COPTS='--click-leak --has leaks aten._to_copy --has leaks 7.63'
	page leaks "$T/leaks.csv"
	# the baseline's verdict names the op memscope-compare's summary names first, and its bytes
	"$BIN/memscope-compare" -i "$T/baseline.csv,$T/leaks.csv" -o cmp.csv 2>cmp.err ||
		bad "memscope-compare: $(head -3 cmp.err)"
	BASE_HAS=$(sed -n '1s/^memscope-compare: \(.* allocated [0-9.]* [KMGT]*i*B more\) in compare than in base.*/\1/p' cmp.err)
	if [ -n "$BASE_HAS" ]; then ok; else bad "memscope-compare's summary: $(head -1 cmp.err)"; fi
	ROPTS="--baseline $T/baseline.csv"
	COPTS='--click-leak --has leaks aten._to_copy'
	page baseline "$T/leaks.csv"
	BASE_HAS=''
	# stepped dumps, with stacks (steps_mstx) and without, mstx, SYSTEM STEP and profiler steps
	ROPTS=''
	COPTS='--click-leak'
	for f in steps_mstx steps_system profiler_steps profiler_gaps late groups; do
		page "leaks-$f" "$T/leaks/$f.csv"
	done
	# ACCESS rows: memory held longer than needed, against memscope-inefficient
	INEFF=1
	page inefficient "$T/inefficient/rules.csv"
	INEFF=0
	# the two dumps of one msMemScope run together: two inputs, the ranks section
	COPTS=''
	page dumps "$T"/memscope_dump_20250428113810.csv "$T"/memscope_dump_20250428113811.csv
	;;
msprof)
	COPTS=--click-leak
	for d in torch_npu_level0_rank0_ascend_pt torch_npu_st_level2_rank_0_ascend_pt; do
		page "msprof-$d" "$T/msprof/$d"
	done
	# re-saved by a spreadsheet: its rounded rows skipped and counted with --lenient
	ROPTS=--lenient TOPTS=--lenient
	page msprof-insight_test_rank_1 "$T/msprof/insight_test_rank_1"
	;;
snapshot)
	if python3 "$SRC/tests/gpu/make_snapshot.py" -p 4 loop loop.pickle >make.out 2>&1; then
		COPTS='--click-leak'
		page snapshot loop.pickle
	else
		bad "make_snapshot.py: $(tail -3 make.out)"
	fi
	;;
record)
	V=$EXTRA
	# the steps victim: a block leaked in step 2 of 4, its C stack recorded
	TMPDIR=$WORK
	export TMPDIR
	expect_status 0 "$BIN/memscope-record" -q -o steps.mscap -- "$V/steps"
	COPTS='--click-leak --has leaks step'
	page record steps.mscap
	;;
ranks64)
	# 64 ranks of 2 devices; rank 30's second device is corrupt and rank 50's first empty: both
	# rows of the page, named on stderr, exit 3 (as memscope-batch)
	"$EXTRA" tree tree || bad "gen_ranks tree"
	# memscope-leaks stops at the first bad input: the others, whose sums the report's are
	LEAKS_IN=$(find tree -name 'memscope_dump_*.csv' | sort |
		grep -v -e '^tree/rank30/.*/device_5/' -e '^tree/rank50/.*/device_4/')
	WANT=3 COPTS='--click-leak'
	page ranks64 tree
	if [ "$(grep -c '^memscope-report: tree/rank\(30\|50\)/' ranks64.err)" -eq 2 ]; then ok; else
		bad "ranks64: the two bad inputs not named: $(head -5 ranks64.err)"
	fi
	;;
clocks)
	COPTS='--clocks'
	page clocks "$T/msprof/insight_test_rank_0"
	;;
*)
	echo "test_report: unknown kind '$KIND'" >&2
	exit 2
	;;
esac
finish
