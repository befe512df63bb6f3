#!/bin/sh
# Benchmark of the PyTorch snapshot reader: prints the wall time, CPU time, throughput and peak
# RSS of `memscope-export --format folded` on a generated protocol-4 snapshot of SIZE MB
# (tests/gpu/make_snapshot.py stream: a training loop, ~40 frames per entry drawn from 3200
# shared frame dicts, ~150 bytes per entry as real files have), next to `cat FILE >/dev/null` of
# the same file, and the ratio between them. Issue 20 asks, for 1 GB: at most 10 s and 256 MB.
# Figures only: nothing is judged.
#
# usage: bench_snapshot.sh [-B BUILD] [-s SIZE] [-k REPEAT]
#   -B  the build directory: memscope-export built or brought up to date there (build); the
#       snapshot is written once into BUILD/bench-snapshot and kept (rewritten when
#       make_snapshot.py changes)
#   -s  MB (1000)   -k  runs of each command; the fastest is shown (1)
# The file is read once by cat before anything is timed (warm page cache when it fits in
# memory, whose size is printed). The load average before and after is printed: other work on
# the machine inflates wall times.
# Exit status: 0 when every command ran, 1 when one failed, 2 usage, 4 no build or no input.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
SIZE=1000
REPEAT=1
while getopts B:s:k:h opt; do
	case $opt in
	B) BUILD=$OPTARG ;;
	s) SIZE=$OPTARG ;;
	k) REPEAT=$OPTARG ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "bench_snapshot: unexpected operand '$1'" >&2; exit 2; }
for v in "$SIZE" "$REPEAT"; do
	case $v in '' | *[!0-9]* | 0) echo "bench_snapshot: bad number '$v'" >&2; exit 2 ;; esac
done
[ -x /usr/bin/time ] || { echo "bench_snapshot: needs GNU time (/usr/bin/time)" >&2; exit 4; }

[ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$SRC" -B "$BUILD" >/dev/null || exit 4
cmake --build "$BUILD" --target memscope-export >/dev/null ||
	{ echo "bench_snapshot: cannot build memscope-export in $BUILD" >&2; exit 4; }
EXPORT=$BUILD/tools/memscope-export
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)

# the snapshot, written once per generator source and size (older ones removed)
KEY=$(cksum <"$SRC/tests/gpu/make_snapshot.py" | cut -d' ' -f1)
TOP=$BUILD/bench-snapshot
FILE=$TOP/snapshot-${SIZE}MB-$KEY.pickle
WORK=$TOP/work
mkdir -p "$TOP" "$WORK" || exit 4
for old in "$TOP"/snapshot-*.pickle; do
	[ "$old" = "$FILE" ] || [ ! -e "$old" ] || rm -f "$old" "$old.json"
done
if [ ! -s "$FILE.json" ]; then
	echo "writing $FILE ..."
	/usr/bin/time -f '%e %M' -o "$WORK/gen.time" python3 "$SRC/tests/gpu/make_snapshot.py" \
		stream "$FILE" --size $((SIZE * 1000000)) --no-events ||
		{ rm -f "$FILE" "$FILE.json"; echo "bench_snapshot: make_snapshot.py failed" >&2; exit 4; }
	read -r gs gm <"$WORK/gen.time"
	echo "written in $gs s, the generator's max RSS $(awk -v m="$gm" 'BEGIN{printf "%.0f", m/1024}') MiB"
fi
BYTES=$(wc -c <"$FILE")
read -r ENTRIES EVENTS <<EOF
$(python3 -c 'import json,sys
f = json.load(open(sys.argv[1]))["figures"]["counts"]
ev = sum(f.values())
frees = f.get("FREE CUDA_CACHING", 0)
print(ev + frees - sum(v for k, v in f.items() if k.startswith("OP_LAUNCH")), ev)' "$FILE.json")
EOF
MB=$(awk -v b="$BYTES" 'BEGIN{printf "%.1f", b/1e6}')

echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1), $(awk '/^MemTotal/{printf "%.1f GB", $2/1048576}' /proc/meminfo) memory; build: $BUILD (${BUILD_TYPE:-RelWithDebInfo, the default})"
echo "input: $FILE, $MB MB, protocol 4, ~$ENTRIES trace entries ($(awk -v b="$BYTES" -v n="$ENTRIES" 'BEGIN{printf "%.0f", b/n}') B each), $EVENTS events"
echo "warm: the file read once by cat first, the page cache not dropped"
cat "$FILE" >/dev/null
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

BENCH=bench_snapshot
STATUS=0
bench_before() { :; }
# shellcheck source=tests/bench/bench_lib.sh
. "$SRC/tests/bench/bench_lib.sh"

row() { bench_row "$1" 36 time; }

printf '%-36s %8s %8s %9s %8s %9s\n' command "wall s" "cpu s" "MB/s" "RSS MiB" "time/cat"
CAT_W=0
bench_run cat cat "$FILE"
CAT_W=$W
row "cat FILE >/dev/null"
bench_run export "$EXPORT" --format folded -o /dev/null "$FILE"
row "memscope-export --format folded"
echo "issue 20 asks for 1 GB: at most 10 s and 256 MB"
echo "RSS: of /usr/bin/time -f %M"
echo "memscope-export summary: $S"
rm -f "$WORK/time" "$WORK/stderr"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
