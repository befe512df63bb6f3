#!/bin/sh
# Benchmark of memscope-report: prints, side by side, (a) for one big generated msMemScope dump
# (tests/batch/gen_ranks.c's bench input: a training loop with stacks and ACCESS rows) and (s)
# for a PyTorch snapshot of the same size (tests/gpu/make_snapshot.py stream), the time
# memscope-report takes to write its page (memscope-batch's on the same input beside it), the
# page's size and the time Chromium takes until the page is drawn (body[data-ready=1], by the
# page's own clock: performance.now() from the navigation's start, read through
# tests/report/check_report.py, which checks the page too); (b) for N ranks of SIZE MB each,
# memscope-report and memscope-batch on the same tree, wall and CPU seconds, peak RSS, and their
# ratios. Issue 31 asks: a 1 GB input gives a page of at most 10 MB, interactive in under 2 s;
# 256 ranks x 50 MB cost at most 1.2x memscope-batch. Figures only: nothing is judged, the
# limits are printed beside them.
#
# usage: bench_report.sh [-B BUILD] [-g MB] [-n N] [-s SIZE] [-k REPEAT] [-j JOBS] [-p PARTS]
#   -B  the build directory: the tools and tests/gen_ranks below it, built or brought up to date
#       there (build); inputs are written once into BUILD/bench-report (a) and BUILD/bench-batch
#       (b, shared with bench_batch.sh) and kept
#   -g  MB of the big input (1000)   -n  ranks (256)   -s  MB per rank (50)
#   -k  runs of each command; the fastest is shown (1)
#   -j  the -j of both tools in (b) (the number of CPUs); both are timed at -j 1 too
#   -p  the parts to run, any of a, s and b (asb): s is (a) on a PyTorch snapshot of -g MB
#       (make_snapshot.py stream, written once into BUILD/bench-snapshot, shared with
#       bench_snapshot.sh)
# A quick run: bench_report.sh -g 100 -n 16 -s 5. The page cache is warm: every file is read
# once by cat before anything is timed; the load average before and after is printed (other
# work on the machine inflates wall times).
# Exit status: 0 when every command ran, 1 when one failed, 2 usage, 4 no build or no inputs.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
GMB=1000
N=256
SIZE=50
REPEAT=1
JOBS=''
PARTS=asb
while getopts B:g:n:s:k:j:p:h opt; do
	case $opt in
	B) BUILD=$OPTARG ;;
	g) GMB=$OPTARG ;;
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	k) REPEAT=$OPTARG ;;
	j) JOBS=$OPTARG ;;
	p) PARTS=$OPTARG ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "bench_report: unexpected operand '$1'" >&2; exit 2; }
for v in "$GMB" "$N" "$SIZE" "$REPEAT" ${JOBS:+"$JOBS"}; do
	case $v in '' | *[!0-9]* | 0) echo "bench_report: bad number '$v'" >&2; exit 2 ;; esac
done
case $PARTS in *[!asb]* | '') echo "bench_report: -p takes a, s and b" >&2; exit 2 ;; esac
[ -x /usr/bin/time ] || { echo "bench_report: needs GNU time (/usr/bin/time)" >&2; exit 4; }

[ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$SRC" -B "$BUILD" >/dev/null || exit 4
cmake --build "$BUILD" --target gen_ranks memscope-report memscope-batch >/dev/null ||
	{ echo "bench_report: cannot build the tools in $BUILD" >&2; exit 4; }
GEN=$BUILD/tests/gen_ranks
REPORT=$BUILD/tools/memscope-report
BATCH=$BUILD/tools/memscope-batch
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
KEY=$(cat "$SRC/tests/batch/gen_ranks.c" "$SRC/tests/bench/bench_dump.h" \
	"$SRC/tests/bench/gen_training.h" | cksum | cut -d' ' -f1)
WORK=$BUILD/bench-report/work
mkdir -p "$WORK" || exit 4

# shellcheck disable=SC2034 # bench_lib.sh's
BENCH=bench_report
STATUS=0
# shellcheck disable=SC2317 # called by bench_lib.sh
bench_before() { :; }
# shellcheck source=tests/bench/bench_lib.sh
. "$SRC/tests/bench/bench_lib.sh"

# ratio A B: A / B with two decimals, - when either is unknown
ratio() { awk -v a="$1" -v b="$2" 'BEGIN{if (a != "nan" && b != "nan" && b > 0) printf "%.2f", a/b; else printf "-"}'; }
mb() { awk -v b="$1" 'BEGIN{printf "%.2f", b/1e6}'; }
# line NAME: one table line of the last bench_run (wall s, cpu s, RSS MiB)
line() {
	if [ "$W" = nan ]; then
		printf '%-34s %8s\n' "$1" failed
	else
		printf '%-34s %8s %8s %8s\n' "$1" "$W" "$C" "$(awk -v r="$R" 'BEGIN{printf "%.1f", r/1024}')"
	fi
}
# chromium PAGE: the fastest of REPEAT loads of PAGE in Chromium until body[data-ready=1], in
# ms, into READY (nan when it never was); check_report.py's verdict on the page into CHECK
chromium_ready() {
	READY=nan
	CHECK=''
	i=0
	while [ $i -lt "$REPEAT" ]; do
		python3 "$SRC/tests/report/check_report.py" --timeout 120 "$1" >"$WORK/check.out" 2>&1
		rc=$?
		[ $rc -eq 77 ] && { CHECK='chromium not installed'; return; }
		ms=$(sed -n 's/^check_report: [A-Za-z]*: .* ready in \([0-9]*\) ms$/\1/p' "$WORK/check.out")
		if [ -n "$ms" ] && { [ "$READY" = nan ] || [ "$ms" -lt "$READY" ]; }; then
			READY=$ms
		fi
		if [ $rc -eq 0 ]; then CHECK='page checked: ok'; else
			CHECK="page checked: $(grep -vc ' ready in ' "$WORK/check.out") differences (first: $(head -1 "$WORK/check.out"))"
		fi
		i=$((i + 1))
	done
}

echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal/{printf "%.1f GB", $2/1048576}' /proc/meminfo) memory; build: $BUILD (${BUILD_TYPE:-RelWithDebInfo, the default}); $(chromium --version 2>/dev/null | tail -1)"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# big NAME FILE WHAT: part (a) on one input: its page's cost, size and time to draw
big() {
	BYTES=$(wc -c <"$2")
	cat "$2" >/dev/null
	echo
	echo "($1) one input of $(mb "$BYTES") MB, $3: $2"
	printf '%-34s %8s %8s %8s\n' command "wall s" "cpu s" "RSS MiB"
	bench_run cat cat "$2"
	line "cat INPUT >/dev/null"
	bench_run batch "$BATCH" -q --format json -o /dev/null "$2"
	line "memscope-batch --format json"
	rm -f "$WORK/big.html"
	bench_run report "$REPORT" -q -f -o "$WORK/big.html" "$2"
	line "memscope-report -o big.html"
	PAGE=0
	[ -f "$WORK/big.html" ] && PAGE=$(wc -c <"$WORK/big.html")
	chromium_ready "$WORK/big.html"
	echo "page: $(mb "$PAGE") MB (issue 31: at most 10 MB)"
	echo "drawn in Chromium (body[data-ready=1] after the navigation's start, best of $REPEAT): $READY ms (issue 31: under 2000 ms); $CHECK"
}

case $PARTS in *a*)
	DIR=$BUILD/bench-report/big-${GMB}MB-$KEY
	for old in "$BUILD/bench-report/big-${GMB}MB-"*; do
		[ "$old" = "$DIR" ] || rm -rf "$old"
	done
	mkdir -p "$DIR" && "$GEN" bench "$DIR" 1 "$GMB" "$(nproc)" >/dev/null || exit 4
	BIG=$(find "$DIR/rank0" -name 'memscope_dump_*.csv' -type f | head -1)
	[ -n "$BIG" ] || { echo "bench_report: no input in $DIR" >&2; exit 4; }
	big a "$BIG" "an msMemScope dump (gen_ranks bench: a training loop, stacks on 8% of MALLOCs, ACCESS rows)"
	;;
esac

case $PARTS in *s*)
	# the snapshot of bench_snapshot.sh, written once into BUILD/bench-snapshot (shared with it)
	SKEY=$(cksum <"$SRC/tests/gpu/make_snapshot.py" | cut -d' ' -f1)
	SNAP=$BUILD/bench-snapshot/snapshot-${GMB}MB-$SKEY.pickle
	mkdir -p "$BUILD/bench-snapshot" || exit 4
	if [ ! -s "$SNAP.json" ]; then
		PYTHONDONTWRITEBYTECODE=1 python3 "$SRC/tests/gpu/make_snapshot.py" stream "$SNAP" \
			--size $((GMB * 1000000)) --no-events >/dev/null ||
			{ rm -f "$SNAP" "$SNAP.json"; echo "bench_report: make_snapshot.py failed" >&2; exit 4; }
	fi
	big s "$SNAP" "a PyTorch memory snapshot (make_snapshot.py stream: stacks on every block)"
	;;
esac

case $PARTS in *b*)
	DIR=$BUILD/bench-batch/${SIZE}MB-$KEY
	mkdir -p "$DIR" && "$GEN" bench "$DIR" "$N" "$SIZE" "$(nproc)" >/dev/null || exit 4
	RANKS=$(i=0; while [ $i -lt "$N" ]; do echo "$DIR/rank$i"; i=$((i + 1)); done)
	# shellcheck disable=SC2086 # the rank folders, one word each
	find $RANKS -name 'memscope_dump_*.csv' -type f | sort -V >"$WORK/files"
	BYTES=$(xargs cat <"$WORK/files" | wc -c)
	echo
	echo "(b) $N ranks, $(wc -l <"$WORK/files") files, $(mb "$BYTES") MB in all, in $DIR"
	printf '%-34s %8s %8s %8s\n' command "wall s" "cpu s" "RSS MiB"
	# both tools at -j N (their default: the CPUs), then both at -j 1 (one after another)
	J=${JOBS:-$(nproc)}
	for j in $J 1; do
		[ "$j" = 1 ] && [ "$J" = 1 ] && [ -n "${RW:-}" ] && break
		# shellcheck disable=SC2086
		bench_run batch "$BATCH" -q -j "$j" --format json -o /dev/null $RANKS
		BW=$W BC=$C
		line "memscope-batch -j $j --format json"
		rm -f "$WORK/ranks.html"
		# shellcheck disable=SC2086
		bench_run report "$REPORT" -q -j "$j" -f -o "$WORK/ranks.html" $RANKS
		RW=$W RC=$C
		line "memscope-report -j $j -o ranks.html"
		echo "  memscope-report / memscope-batch at -j $j: wall $(ratio "$RW" "$BW")x, cpu $(ratio "$RC" "$BC")x (issue 31: at most 1.2x)"
	done
	PAGE=0
	[ -f "$WORK/ranks.html" ] && PAGE=$(wc -c <"$WORK/ranks.html")
	chromium_ready "$WORK/ranks.html"
	echo "page: $(mb "$PAGE") MB, drawn in Chromium in $READY ms; $CHECK"
	;;
esac
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
