#!/bin/sh
# memscope-record on a full disk (issue 35): a recording stopped by a write error is kept, but its
# capture says it is incomplete, so that no tool reads it as a whole run: refused (exit 3, one line
# naming the file and why) without --lenient, read with it, saying how much was lost. A spool
# left with holes on a full tmpfs is read as the zeros its holes are (the launcher took a SIGBUS).
# Each case on a small tmpfs in a mount namespace of its own: skipped when not root.
# Args: BIN_DIR SRC_DIR VICTIM_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
V=$(cd "$3" && pwd)
. "$SRC/tests/cli/lib.sh"
R="$BIN/memscope-record"
cd "$WORK" || exit 1
mkdir tiny

# shellcheck disable=SC2016 # the inner shell's arguments
if [ "$(id -u)" -ne 0 ] || ! unshare --mount sh -c 'mount -t tmpfs -o size=64k tmpfs "$1"' sh tiny 2>/dev/null; then
	echo "SKIP: not root, or unshare --mount fails"
	exit 77
fi

# on_tiny FILL_KIB CMD...: CMD run with $T a 64 KiB tmpfs of which FILL_KIB are taken; what it
# leaves there copied into ./kept, its exit status returned
on_tiny() {
	# shellcheck disable=SC2016
	unshare --mount sh -c 'T=$1; fill=$2; shift 2; mount -t tmpfs -o size=64k tmpfs "$T" &&
		{ head -c "${fill}k" /dev/zero >"$T/fill" 2>/dev/null || :; } && rm -rf kept && mkdir kept &&
		{ "$@"; s=$?; }; rm -f "$T/fill"; cp -a "$T/." kept/; exit $s' sh "$WORK/tiny" "$@"
}

# every tool built that reads one input and writes -o (not the recorder, compare's pairs, batch's
# walk), a new one by itself: TOOL.EXT, EXT what its -o takes (txt unless said)
READERS=
for b in "$BIN"/memscope-*; do
	t=${b##*/memscope-}
	{ [ -f "$b" ] && [ -x "$b" ]; } || continue
	case $t in
	record | compare | batch) continue ;;
	convert) t=$t.csv ;;
	db) t=$t.db ;;
	export) t=$t.json ;;
	*) t=$t.txt ;;
	esac
	READERS="$READERS $t"
done

# tools_on CAPTURE EVENTS LOST: every reading tool refuses CAPTURE (3, one line naming it and why);
# with --lenient reads it (0) and says the same and how much was lost
tools_on() {
	why="^memscope-[a-z]+: $1: recording incomplete: stopped by a write error \(No space left on device\) after $2 events; $3 later calls \(allocations, frees, markers\) not recorded"
	for t in $READERS; do
		expect_status 3 "$BIN/memscope-${t%.*}" -o "$WORK/out.$t" "$1"
		expect_err_line "$why"
		expect_absent "$WORK/out.$t"
		expect_status 0 "$BIN/memscope-${t%.*}" --lenient -o "$WORK/out.$t" "$1"
		if grep -Eq "${why}; every complete record before the cut was read \(--lenient\)" "$WORK/err"; then ok; else
			bad "memscope-${t%.*} --lenient $1: $(cat "$WORK/err")"
		fi
		rm -f "$WORK/out.$t"
	done
}

# the spool's disk full before the first segment (48 of 64 KiB taken: the header fits, a segment
# not): exit 4, no event, every later call counted; the capture kept and marked
# shellcheck disable=SC2016
expect_status 4 on_tiny 48 sh -c 'exec "$1" -o "$2/early.mscap" -- "$3"' sh "$R" "$WORK/tiny" "$V/basic"
if grep -q "^ok$" "$WORK/out"; then ok; else bad "basic did not run: $(cat "$WORK/out")"; fi
grep -v "^memscope-record: recording stopped: .*No space left on device$" "$WORK/err" | grep -v "^memscope-record: .*: 0 events, " >"$WORK/err2"
mv "$WORK/err2" "$WORK/err"
expect_err_line "^memscope-record: .*/early\.mscap: recording incomplete: stopped by a write error \(No space left on device\) after 0 events, later calls not recorded: [1-9][0-9]*; kept, marked incomplete \(read it with --lenient\)$"
if [ -s kept/early.mscap ] && [ -z "$(ls -A kept | grep -v '^early\.mscap$')" ]; then ok; else
	bad "early.mscap not kept, or more left: $(ls -A kept)"
fi
mv kept/early.mscap early.mscap
tools_on early.mscap 0 "[1-9][0-9]*"

# full after the first segment: the events before the stop kept; churn's 400000 calls are the
# recorded events and the later calls, exactly (churn exits 3: its status passed on)
# shellcheck disable=SC2016
expect_status 3 on_tiny 16 sh -c 'exec "$1" -o "$2/churn.mscap" -- "$3"' sh "$R" "$WORK/tiny" "$V/churn"
mv kept/churn.mscap churn.mscap
n=$(sed -n 's/.*churn\.mscap: recording incomplete: .* after \([0-9]*\) events, later calls not recorded: \([0-9]*\);.*/\1 \2/p' "$WORK/err")
# shellcheck disable=SC2086 # "EVENTS LOST"
set -- $n
if [ "$#" -eq 2 ] && [ "$1" -gt 0 ] && [ $(($1 + $2)) -eq 400000 ]; then ok; else bad "churn: events and lost calls '$n': $(cat "$WORK/err")"; fi
tools_on churn.mscap "$1" "$2"

# the disk full before the shim could write its spool's header: the shim's line, then one line
# naming the output, exit 4, nothing left (the launcher died of SIGBUS reading the empty header)
# shellcheck disable=SC2016
expect_status 4 on_tiny 64 sh -c 'exec "$1" -o "$2/none.mscap" -- "$3"' sh "$R" "$WORK/tiny" "$V/basic"
if grep -q "^ok$" "$WORK/out"; then ok; else bad "basic did not run: $(cat "$WORK/out")"; fi
if [ "$(wc -l <"$WORK/err")" -eq 2 ] && grep -q "^memscope-record: recording stopped: .*: No space left on device$" "$WORK/err" &&
	grep -q "^memscope-record: .*/none\.mscap: not written: nothing was recorded (the spool could not be written: its disk is full)$" "$WORK/err"; then ok; else
	bad "no header: $(cat "$WORK/err")"
fi
if [ -z "$(ls -A kept)" ]; then ok; else bad "no header: left on the disk: $(ls -A kept)"; fi

# holes in a spool on a full tmpfs (holes.c makes them and fills the disk; the output elsewhere,
# so the spool goes to TMPDIR): read as zeros, the recording written (the launcher died of
# SIGBUS, its spool folder left behind)
# shellcheck disable=SC2016
expect_status 0 on_tiny 0 sh -c 'TMPDIR=$2 exec "$1" --stack none -o /dev/null -- "$3"' sh "$R" "$WORK/tiny" "$V/holes"
expect_err_line "^memscope-record: /dev/null: 1 events, 1 thread, .*, exit 0, .*; 1 blocks \(4242 bytes\) alive at the end$"
if [ -z "$(ls -A kept)" ]; then ok; else bad "holes: left on the disk: $(ls -A kept)"; fi

finish
