#!/bin/sh
# valgrind as the oracle of memscope-record's exit leaks: on each C and C++ victim of
# tests/record/victims, the blocks a recording leaves unreleased at exit (memscope-leaks --kinds
# exit) are valgrind memcheck's "in use at exit", exactly in blocks and bytes, glibc's own caches
# released by both (__libc_freeres), threads included. Skipped (77) without valgrind.
# Not compared: killed (SIGKILL leaves valgrind no summary), execer (its child execs), forked's
# child (valgrind counts the blocks it inherits, a recording only its own: formats/record.md 2.5;
# the parent is compared), holes (it fills the spool's disk on purpose), latecxx (the shim's own
# libraries are already loaded when it dlopens, so the dynamic linker allocates less than under
# valgrind).
# Args: BIN_DIR SRC_DIR VICTIM_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
V=$(cd "$3" && pwd)
. "$SRC/tests/cli/lib.sh"
if ! command -v valgrind >/dev/null 2>&1; then
	echo "SKIP: valgrind not installed"
	exit 77
fi
cd "$WORK" || exit 1
TMPDIR=$WORK
export TMPDIR

# same NAME ARGS...: victim NAME run with ARGS under valgrind and under memscope-record; the
# recording's exit leaks are valgrind's "in use at exit"
same() {
	name=$1
	shift
	label="$name${*:+ $*}"
	vg=$(valgrind --leak-check=full --child-silent-after-fork=yes "$V/$name" "$@" 2>&1 >/dev/null |
		sed -n 's/^==[0-9]*==  *in use at exit: \([0-9,]*\) bytes in \([0-9,]*\) blocks$/\2 \1/p' |
		head -1 | tr -d ,)
	out=$(echo "$name $*" | tr -c 'A-Za-z0-9\n' _)
	"$BIN/memscope-record" -q -o "$out.mscap" -- "$V/$name" "$@" >/dev/null 2>"$out.err"
	if ! "$BIN/memscope-leaks" -q --kinds exit --pool host --format json -o "$out.json" \
		"$out.mscap" 2>>"$out.err"; then
		bad "$label: $(cat "$out.err")"
		return
	fi
	ours=$(python3 -c 'import json, sys
e = json.load(open(sys.argv[1]))["summary"]["exit"]
print(e["leaks"], e["bytes"])' "$out.json")
	if [ -n "$vg" ] && [ "$vg" = "$ours" ]; then
		ok
		echo "$label: $ours (blocks, bytes) in use at exit, as valgrind"
	else
		bad "$label: valgrind (blocks, bytes) '$vg', memscope-record '$ours'"
	fi
}

for v in basic threads quick_exit churn steps mstx leaf nofds forked; do
	same $v
done
[ -x "$V/cxx" ] && same cxx
for mode in h s n x; do
	same badframe $mode
done
finish
