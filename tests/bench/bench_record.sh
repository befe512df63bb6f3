#!/bin/sh
# Benchmark of memscope-record (issue 18): runs alloc_victim (2 threads, each 2,500,000
# malloc/free pairs of 16 B to 4 KiB, 8 blocks live, malloc three calls deep) bare, under
# memscope-record --stack none, under memscope-record with its default stacks on the build with
# frame pointers and on the one without, and under heaptrack, interleaved round by round (noise
# hits every variant alike), best of K by wall time; prints per variant the wall time and its
# ratio to bare, the program's own time (from inside it) and the launcher's work before and
# after it (startup; transcoding the spool), peak RSS, minor faults, the recording's bytes and
# bytes per event; then the reading speed of the recordings; PASS/FAIL against the goals of
# issue 18: <= 2x bare without stacks, <= 5x with, <= 8 B/event without stacks, reading
# >= 50 M events/s.
#
# usage: bench_record.sh [-B BUILD] [-W WORKDIR] [-k REPEAT] [-n PAIRS] [-t THREADS] [-H]
#   -B  the build directory (a Release one for meaningful figures): tools/ and tests/ below it,
#       built or brought up to date there (build)
#   -W  where the recordings go, kept (${TMPDIR:-/tmp}/memscope-bench-record)
#   -k  rounds; the fastest run of each variant is shown (5)
#   -n  malloc/free pairs per thread (2500000)   -t  threads (2)
#   -H  leave heaptrack out (it takes ~20x)
# Ratios with stacks are to the bare run of the same build. Times come from alloc_victim's
# monotonic clock (its --time mode wraps each run). The load average before and after is
# printed: other work on the machine inflates wall times.
# Exit status: 0 when every run succeeded (whatever the verdicts), 1 when one failed, 2 usage,
# 4 no build.
set -u
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
WORK=${TMPDIR:-/tmp}/memscope-bench-record
REPEAT=5
PAIRS=2500000
THREADS=2
HEAPTRACK=1
while getopts B:W:k:n:t:Hh opt; do
	case $opt in
	B) BUILD=$OPTARG ;;
	W) WORK=$OPTARG ;;
	k) REPEAT=$OPTARG ;;
	n) PAIRS=$OPTARG ;;
	t) THREADS=$OPTARG ;;
	H) HEAPTRACK= ;;
	h) sed -n '2,/^set -u/{/^set -u/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) exit 2 ;;
	esac
done
for v in "$REPEAT" "$PAIRS" "$THREADS"; do
	case $v in '' | *[!0-9]* | 0*) echo "bench_record: bad number '$v'" >&2; exit 2 ;; esac
done

# the programs, built (or brought up to date) in BUILD; bench_read is optional
[ -f "$BUILD/CMakeCache.txt" ] || cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release \
	>/dev/null || exit 4
cmake --build "$BUILD" --target alloc_victim_no-omit alloc_victim_omit memscope-record \
	memscope-leaks >/dev/null ||
	{ echo "bench_record: cannot build the programs in $BUILD" >&2; exit 4; }
BENCH_READ=$BUILD/tests/bench_read
cmake --build "$BUILD" --target bench_read >/dev/null 2>&1 || BENCH_READ=
BUILD_TYPE=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$BUILD/CMakeCache.txt" 2>/dev/null)
FP=$BUILD/tests/alloc_victim_no-omit
NOFP=$BUILD/tests/alloc_victim_omit
REC=$BUILD/tools/memscope-record
ARGS="-t $THREADS -n $PAIRS"
mkdir -p "$WORK" || exit 4
if [ -n "$HEAPTRACK" ] && ! command -v heaptrack >/dev/null 2>&1; then
	echo "heaptrack: not installed (apt-get install heaptrack)"
	HEAPTRACK=
fi

# the variants: name, output file (- none), command
VARS="bare bare_nofp none fp nofp${HEAPTRACK:+ heaptrack}"
label() {
	case $1 in
	bare) echo "bare (-fno-omit-frame-pointer)" ;;
	bare_nofp) echo "bare (-fomit-frame-pointer)" ;;
	none) echo "record --stack none" ;;
	fp) echo "record (c:32), frame pointers" ;;
	nofp) echo "record (c:32), no frame pointers" ;;
	heaptrack) echo "heaptrack" ;;
	esac
}
output() {
	case $1 in
	bare | bare_nofp) echo - ;;
	heaptrack) echo "$WORK/heaptrack-out" ;;
	*) echo "$WORK/$1.mscap" ;;
	esac
}
# (ARGS unquoted on purpose: two options)
command_of() {
	case $1 in
	bare) echo "$FP $ARGS" ;;
	bare_nofp) echo "$NOFP $ARGS" ;;
	none) echo "$REC -f --stack none -o $WORK/none.mscap -- $FP $ARGS" ;;
	fp) echo "$REC -f -o $WORK/fp.mscap -- $FP $ARGS" ;;
	nofp) echo "$REC -f -o $WORK/nofp.mscap -- $NOFP $ARGS" ;;
	heaptrack) echo "heaptrack -o $WORK/heaptrack-out $FP $ARGS" ;;
	esac
}

echo "machine: $(nproc) CPU(s), $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1); build: $BUILD (${BUILD_TYPE:-RelWithDebInfo, the default})"
echo "program: alloc_victim $ARGS: $THREADS threads x $PAIRS malloc/free pairs = $((THREADS * PAIRS * 2)) events; best of $REPEAT rounds, variants interleaved"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"

# one run of variant v: appends "v wall prog start after rss minflt cpu" to $WORK/runs
STATUS=0
: >"$WORK/runs"
run() {
	v=$1
	out=$(output "$v")
	[ "$out" = - ] || rm -f "$out" "$out".*
	# shellcheck disable=SC2046
	"$FP" --time $(command_of "$v") >"$WORK/$v.stdout" 2>"$WORK/$v.stderr"
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^victim ' "$WORK/$v.stdout"; then
		echo "bench_record: $(label "$v") exited with $rc:" >&2
		tail -3 "$WORK/$v.stderr" >&2
		STATUS=1
		return
	fi
	awk -v v="$v" '$1 == "victim" { vs = $2; ve = $3 } $1 == "timer" { ts = $2; te = $3;
		rss = $5; flt = $6; cpu = $7 }
		END { printf "%s %.4f %.4f %.4f %.4f %d %d %.3f\n", v, (te - ts) / 1e9, (ve - vs) / 1e9,
			(vs - ts) / 1e9, (te - ve) / 1e9, rss, flt, cpu / 1e9 }' \
		"$WORK/$v.stdout" >>"$WORK/runs"
}
i=0
while [ $i -lt "$REPEAT" ]; do
	for v in $VARS; do
		run "$v"
	done
	i=$((i + 1))
done

# best run of v: "wall prog start after rss minflt cpu"
best() {
	awk -v v="$1" '$1 == v && (b == "" || $2 < b) { b = $2; l = $0 } END { print l }' \
		"$WORK/runs" | cut -d' ' -f2-
}
size_of() {
	f=$(output "$1")
	[ "$f" = - ] && { echo 0; return; }
	for g in "$f" "$f".*; do
		[ -f "$g" ] && { wc -c <"$g" | tr -d ' '; return; }
	done
	echo 0
}
events_of() {
	case $1 in
	none | fp | nofp) sed -n 's/.* \([0-9]*\) events, .*/\1/p' "$WORK/$1.stderr" | head -1 ;;
	*) sed -n 's/^victim [0-9]* [0-9]* \([0-9]*\).*/\1/p' "$WORK/$1.stdout" ;;
	esac
}

printf '%-34s %7s %6s %7s %6s %6s %6s %7s %8s %7s %9s %6s  %s\n' variant "wall s" /bare \
	"prog s" /bare "start" "after" "cpu s" "RSS MiB" "minflt" "file MiB" "B/ev" verdict
BW=$(best bare | cut -d' ' -f1)
BP=$(best bare | cut -d' ' -f2)
BWN=$(best bare_nofp | cut -d' ' -f1)
BPN=$(best bare_nofp | cut -d' ' -f2)
for v in $VARS; do
	b=$(best "$v")
	if [ -z "$b" ]; then
		printf '%-34s %7s  FAIL (exit status)\n' "$(label "$v")" -
		continue
	fi
	# shellcheck disable=SC2086
	set -- $b
	bytes=$(size_of "$v")
	ev=$(events_of "$v")
	case $v in
	nofp | bare_nofp) bw=$BWN bp=$BPN ;;
	*) bw=$BW bp=$BP ;;
	esac
	case $v in
	none) goal_x=2 goal_b=8 ;;
	fp | nofp) goal_x=5 goal_b='' ;;
	*) goal_x='' goal_b='' ;;
	esac
	awk -v l="$(label "$v")" -v w="$1" -v p="$2" -v s="$3" -v a="$4" -v rss="$5" -v flt="$6" \
		-v cpu="$7" -v bw="$bw" -v bp="$bp" -v bytes="$bytes" -v ev="${ev:-0}" \
		-v gx="$goal_x" -v gb="$goal_b" 'BEGIN {
		verdict = ""
		if (gx != "") {
			verdict = (w / bw <= gx ? "PASS" : "FAIL") " <=" gx "x (prog " \
				(p / bp <= gx ? "PASS" : "FAIL") ")"
			if (gb != "")
				verdict = verdict ", " (bytes / ev <= gb ? "PASS" : "FAIL") " <=" gb " B/ev"
		}
		printf "%-34s %7.3f %5.1fx %7.3f %5.1fx %6.3f %6.3f %7.2f %8.1f %7d %9s %6s  %s\n",
			l, w, w / bw, p, p / bp, s, a, cpu, rss / 1024, flt,
			bytes ? sprintf("%.1f", bytes / 1048576) : "-",
			bytes ? sprintf("%.2f", bytes / ev) : "-", verdict }'
done
for v in fp none; do
	sed -n 's/^memscope-record: //p' "$WORK/$v.stderr" | head -1 | sed 's/^/recording: /'
done
echo "(start: fork to the program's main; after: the program's end to the launcher's exit, i.e."
echo " process exit + transcoding the spool; B/ev of heaptrack: its compressed file / the program's events)"

# reading the recordings back: bench_read's capture_read loop, and memscope-leaks --kinds exit
for v in none fp; do
	f=$WORK/$v.mscap
	[ -f "$f" ] || continue
	ev=$(events_of "$v")
	if [ -n "$BENCH_READ" ]; then
		"$BENCH_READ" -r "$REPEAT" -i "$f" 2>&1 | awk -v f="$v.mscap" '
			/^capture_read\[input\]: / { sub(/^capture_read\[input\]: /, ""); m = $0
				sub(/ M events\/s.*/, "", m); sub(/.*= /, "", m)
				printf "read %s (capture_read loop): %s  %s >=50 M events/s\n", f, $0,
					(m + 0 >= 50 ? "PASS" : "FAIL") }'
	else
		echo "read: bench_read did not build in $BUILD: capture_read loop not measured"
	fi
	w=
	c=
	i=0
	while [ $i -lt "$REPEAT" ]; do
		"$FP" --time "$BUILD/tools/memscope-leaks" --kinds exit "$f" >"$WORK/leaks.stdout" \
			2>"$WORK/leaks.stderr" ||
			{ echo "bench_record: memscope-leaks on $f failed:" >&2;
				tail -3 "$WORK/leaks.stderr" >&2; STATUS=1; break; }
		x=$(awk '$1 == "timer" { printf "%.4f", ($3 - $2) / 1e9 }' "$WORK/leaks.stdout")
		if [ -z "$w" ] || awk -v a="$x" -v b="$w" 'BEGIN{exit !(a<b)}'; then
			w=$x
			c=$(awk '$1 == "timer" { printf "%.3f", $7 / 1e9 }' "$WORK/leaks.stdout")
		fi
		i=$((i + 1))
	done
	[ -n "$w" ] && awk -v f="$v.mscap" -v w="$w" -v c="$c" -v ev="$ev" 'BEGIN {
		printf "read %s (memscope-leaks --kinds exit, reading + analysis): %.3f s (cpu %.3f s) = %.1f M events/s\n",
			f, w, c, ev / w / 1e6 }'
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit $STATUS
