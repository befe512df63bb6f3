#!/bin/sh
# Benchmark of the tools on a profiler output: prints the wall time, CPU time and peak RSS of
# memscope-leaks, memscope-export --format folded and memscope-convert on a generated torch_npu
# folder (gen_msprof: 1,000,000 operator_memory rows, 3,000,000 memory_record rows), next to a
# read(2)-only pass over the same files in the same run, and PASS/FAIL against the goal of
# issue 17: leaks and the folded export each in at most 2 s and 64 MB.
#
# usage: bench_msprof.sh [-B BUILD] [-W WORKDIR] [-n ROWS] [-m RECORDS] [-k REPEAT] [-r]
#   -B  the build directory: tools/ and tests/gen_msprof below it, built or brought up to
#       date there (build)
#   -W  where the folder is generated once and kept, and the outputs go
#       (${TMPDIR:-/tmp}/memscope-bench-msprof)
#   -n  operator_memory rows (1000000)   -m  memory_record rows (3000000)
#   -k  runs of each command; the fastest is shown (3)   -r  CRLF files (LF)
# Caches are warm: nothing is dropped, and the files are read once before the first timed run.
# The load average before and after is printed: other work on the machine inflates wall times.
# Exit status: 0 when every command ran (whatever the verdicts), 1 when one failed, 2 usage,
# 4 no build or no folder.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
WORK=${TMPDIR:-/tmp}/memscope-bench-msprof
ROWS=1000000
RECORDS=3000000
REPEAT=3
CRLF=
GOAL_S=2
GOAL_MB=64
while getopts B:W:n:m:k:rh opt; do
	case $opt in
	B) BUILD=$OPTARG ;;
	W) WORK=$OPTARG ;;
	n) ROWS=$OPTARG ;;
	m) RECORDS=$OPTARG ;;
	k) REPEAT=$OPTARG ;;
	r) CRLF=-r ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
for v in "$ROWS" "$RECORDS" "$REPEAT"; do
	case $v in '' | *[!0-9]*) echo "bench_msprof: bad number '$v'" >&2; exit 2 ;; esac
done
[ "$REPEAT" -ge 1 ] || { echo "bench_msprof: -k must be at least 1" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench_msprof: needs GNU time (/usr/bin/time)" >&2; exit 4; }

# the tools and the generator, built (or brought up to date) in BUILD
GEN=$BUILD/tests/gen_msprof
TOOLS=$BUILD/tools
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$SRC" -B "$BUILD" >/dev/null || exit 4
cmake --build "$BUILD" --target gen_msprof memscope-leaks memscope-export memscope-convert \
	>/dev/null || { echo "bench_msprof: cannot build the tools in $BUILD" >&2; exit 4; }
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)

# the folder, made once per generator source and shape (into a temporary name, then renamed)
mkdir -p "$WORK" || exit 4
KEY=$(cksum <"$SRC/tests/bench/gen_msprof.c" | cut -d' ' -f1)
# (named <host>_<pid>_<timestamp>_ascend_pt as torch_npu names them: the pid is the events')
DIR=$WORK/bench-${ROWS}-${RECORDS}${CRLF:+-crlf}-${KEY}_4242_20251127120000000_ascend_pt
OUT=$DIR/ASCEND_PROFILER_OUTPUT
if ! [ -d "$DIR" ]; then
	# the folders an older generator made for this shape
	for old in "$WORK/bench-${ROWS}-${RECORDS}${CRLF:+-crlf}-"[0-9]*_ascend_pt; do
		[ -d "$old" ] && rm -rf "$old"
	done
	rm -rf "$DIR.tmp"
	t0=$(date +%s%N)
	"$GEN" -n "$ROWS" -m "$RECORDS" $CRLF "$DIR.tmp" 2>&1 || exit 4
	mv "$DIR.tmp" "$DIR" || exit 4
	echo "generated $DIR in $(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}') s"
fi
F1=$OUT/operator_memory.csv
F2=$OUT/memory_record.csv
BYTES=$(cat "$F1" "$F2" | wc -c)
LINES=$(cat "$F1" "$F2" | wc -l)

echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); build: $BUILD (${BUILD_TYPE:-RelWithDebInfo, the default})"
echo "input: $DIR"
echo "  operator_memory.csv $(wc -l <"$F1") lines, memory_record.csv $(wc -l <"$F2") lines; $LINES lines, $(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1048576}') MiB${CRLF:+, CRLF}"
echo "warm page cache (nothing dropped, files read once first); best of $REPEAT by wall time; RSS: the highest of the runs"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
"$GEN" --read "$F1" "$F2" >/dev/null || exit 4

# run NAME OUTPUT CMD...: bench_lib.sh's bench_run NAME CMD... (sets W, C, R), OUTPUT (the file
# CMD writes) removed before each timed run
BENCH=bench_msprof
STATUS=0
bench_before() {
	rm -f "$output"
}
# shellcheck source=tests/bench/bench_lib.sh
. "$SRC/tests/bench/bench_lib.sh"
run() {
	name=$1 output=$2
	shift 2
	bench_run "$name" "$@"
}

# row NAME GOAL: one line of the table (GOAL: 1 checks it against the goal)
row() {
	if [ "$W" = nan ]; then
		printf '%-34s %8s %8s %8s %7s  %s\n' "$1" - - - - "FAIL (exit status)"
		return
	fi
	verdict=
	if [ "$2" = 1 ]; then
		if awk -v w="$W" -v r="$R" -v gs="$GOAL_S" -v gm="$GOAL_MB" \
			'BEGIN{exit !(w <= gs && r <= gm * 1024)}'; then
			verdict=PASS
		else
			verdict=FAIL
		fi
	fi
	printf '%-34s %8s %8s %8s %7s  %s\n' "$1" "$W" "$C" \
		"$(awk -v r="$R" 'BEGIN{printf "%.1f", r/1024}')" \
		"$(awk -v w="$W" -v b="$BASE" 'BEGIN{printf "%.1fx", (b > 0 ? w/b : 0)}')" "$verdict"
}

printf '%-34s %8s %8s %8s %7s  %s\n' "command" "wall s" "cpu s" "RSS MiB" "/base" \
	"goal: <= ${GOAL_S} s and <= ${GOAL_MB} MiB"
run baseline /dev/null/none "$GEN" --read "$F1" "$F2"
BASE=$W
row "read(2) only (1 MiB reads)" 0
run leaks /dev/null/none "$TOOLS/memscope-leaks" "$DIR"
row "memscope-leaks DIR" 1
run export "$WORK/x.folded" "$TOOLS/memscope-export" --format folded "$DIR" -o "$WORK/x.folded"
row "memscope-export --format folded" 1
run convert "$WORK/x.csv" "$TOOLS/memscope-convert" "$DIR" -o "$WORK/x.csv"
row "memscope-convert -o x.csv (ref.)" 0
echo "outputs: x.folded $(cat "$WORK/x.folded" 2>/dev/null | wc -l) lines (kept in $WORK), x.csv $(awk -v b="$(cat "$WORK/x.csv" 2>/dev/null | wc -c)" 'BEGIN{printf "%.1f", b/1048576}') MiB (removed)"
rm -f "$WORK/x.csv" "$WORK/time" "$WORK/stderr"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
