#!/bin/sh
# Benchmark of memscope-batch: prints the wall time, throughput and peak RSS of memscope-batch -j 1
# and -j 2 on N generated msMemScope dumps of SIZE MB each (tests/batch/gen_ranks.c: a training
# loop with ACCESS rows, one rank in 16 leaking), next to `cat FILES >/dev/null` of the same files
# in the same run, and the ratios between them. Issue 19 asks, for 256 inputs of 50 MB on a
# 2-core machine: -j 2 at least 1.8x the throughput of -j 1, at least 500 MB/s, at most 64 MB per
# worker. Figures only: nothing is judged.
#
# usage: bench_batch.sh [-B BUILD] [-n N] [-s SIZE] [-k REPEAT] [-c]
#   -B  the build directory: tools/ and tests/gen_ranks below it, built or brought up to date
#       there (build); the inputs are written once into BUILD/bench-batch and kept
#   -n  inputs (256)   -s  MB per input (50)   -k  runs of each command; the fastest is shown (1)
#   -c  cold: drop the page cache before each timed run (needs root; most containers refuse)
# Caches: by default the files are read once by cat before anything is timed, so every figure is
# of warm files when they fit in memory (the machine's memory is printed); nothing is dropped
# (it takes root, and is refused in most containers). The load average before and after is
# printed: other work on the machine inflates wall times.
# Exit status: 0 when every command ran, 1 when one failed, 2 usage, 4 no build or no inputs.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
N=256
SIZE=50
REPEAT=1
COLD=0
while getopts B:n:s:k:ch opt; do
	case $opt in
	B) BUILD=$OPTARG ;;
	n) N=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	k) REPEAT=$OPTARG ;;
	c) COLD=1 ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "bench_batch: unexpected operand '$1'" >&2; exit 2; }
for v in "$N" "$SIZE" "$REPEAT"; do
	case $v in '' | *[!0-9]* | 0) echo "bench_batch: bad number '$v'" >&2; exit 2 ;; esac
done
[ -x /usr/bin/time ] || { echo "bench_batch: needs GNU time (/usr/bin/time)" >&2; exit 4; }

# the tool and the generator, built (or brought up to date) in BUILD
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$SRC" -B "$BUILD" >/dev/null || exit 4
cmake --build "$BUILD" --target gen_ranks memscope-batch >/dev/null ||
	{ echo "bench_batch: cannot build the tools in $BUILD" >&2; exit 4; }
GEN=$BUILD/tests/gen_ranks
BATCH=$BUILD/tools/memscope-batch
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)

# the inputs, written once per generator source and size (older generators' removed); a bigger
# -n later writes only the inputs missing
KEY=$(cat "$SRC/tests/batch/gen_ranks.c" "$SRC/tests/bench/bench_dump.h" \
	"$SRC/tests/bench/gen_training.h" | cksum | cut -d' ' -f1)
TOP=$BUILD/bench-batch
DIR=$TOP/${SIZE}MB-$KEY
WORK=$TOP/work
mkdir -p "$DIR" "$WORK" || exit 4
for old in "$TOP/${SIZE}MB-"*; do
	[ "$old" = "$DIR" ] || rm -rf "$old"
done
"$GEN" bench "$DIR" "$N" "$SIZE" "$(nproc)" || exit 4
# the N rank folders (the folder may hold more from an earlier run)
RANKS=$(i=0; while [ $i -lt "$N" ]; do echo "$DIR/rank$i"; i=$((i + 1)); done)
find $RANKS -name 'memscope_dump_*.csv' -type f | sort -V >"$WORK/files"
BYTES=$(xargs cat <"$WORK/files" | wc -c)
NFILES=$(wc -l <"$WORK/files")
MB=$(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1e6}')

echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal/{printf "%.1f GB", $2/1048576}' /proc/meminfo) memory; build: $BUILD (${BUILD_TYPE:-RelWithDebInfo, the default})"
echo "inputs: $NFILES files, $MB MB in all, in $DIR"
drop_cache() {
	sync && (echo 3 >/proc/sys/vm/drop_caches) 2>/dev/null
}
if [ $COLD -eq 1 ]; then
	drop_cache || { echo "bench_batch: -c: the page cache cannot be dropped here" >&2; exit 4; }
	echo "cold: the page cache dropped before each timed run"
else
	echo "warm: the files read once by cat first, the page cache not dropped"
	xargs cat <"$WORK/files" >/dev/null
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# the timed runs: bench_lib.sh's bench_run, the page cache dropped before each with -c
BENCH=bench_batch
STATUS=0
bench_before() {
	[ $COLD -eq 0 ] || drop_cache
}
# shellcheck source=tests/bench/bench_lib.sh
. "$SRC/tests/bench/bench_lib.sh"

# row NAME: one line of the table; the rate relative to cat's
row() { bench_row "$1" 28 rate; }

printf '%-28s %8s %8s %9s %8s %9s\n' command "wall s" "cpu s" "MB/s" "RSS MiB" "rate/cat"
CAT_W=1
bench_run cat sh -c 'xargs cat <"$1" >/dev/null' sh "$WORK/files"
CAT_W=$W
row "cat FILES >/dev/null"
# the summary line on stderr is kept (no -q): it may say what each worker used
bench_run j1 "$BATCH" -j 1 --format csv -o /dev/null $RANKS
J1_W=$W
row "memscope-batch -j 1"
J1_S=$S
bench_run j2 "$BATCH" -j 2 --format csv -o /dev/null $RANKS
J2_W=$W
row "memscope-batch -j 2"
J2_S=$S
echo "speedup -j 2 / -j 1: $(awk -v a="$J1_W" -v b="$J2_W" 'BEGIN{if (a != "nan" && b != "nan" && b > 0) printf "%.2fx", a/b; else printf "-"}') (issue 19 asks at least 1.8x, 500 MB/s, 64 MB per worker)"
echo "RSS: of /usr/bin/time -f %M, the largest process of the command (the parent or one worker)"
echo "-j 1 summary: $J1_S"
echo "-j 2 summary: $J2_S"
rm -f "$WORK/time" "$WORK/stderr"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
