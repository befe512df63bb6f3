#!/bin/sh
# memscope-record's Python frames on a real interpreter: the leaks planted in
# tests/record/python/pyframes.py (a function, a thread, a generator, ctypes into libc's malloc)
# each reported by memscope-leaks with its Python line innermost, the peak flame graph's heaviest
# stack ending at the line that holds most memory, and --stack choosing the frames recorded.
# Run on Debian's /usr/bin/python3 and on the python3 first on PATH when it is another.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
REC="$BIN/memscope-record"
PROG="$SRC/tests/record/python/pyframes.py"
export PYTHONDONTWRITEBYTECODE=1 PYTHONMALLOC=malloc
unset MEMSCOPE_RECORD_SPOOL MEMSCOPE_RECORD_OPTS MEMSCOPE_RECORD_MAIN PYTHONPATH PYTHONSTARTUP
cd "$WORK" || exit 1

# check_py WHAT ARGS...: the python3 script on stdin exits 0, else WHAT failed
check_py() {
	what=$1
	shift
	if python3 - "$@" >"$WORK/py.err" 2>&1; then ok; else bad "$what: $(tail -5 "$WORK/py.err")"; fi
}

PYS=""
[ -x /usr/bin/python3 ] && PYS=/usr/bin/python3
OTHER=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null)
[ -n "$OTHER" ] && [ "$(readlink -f "$OTHER")" != "$(readlink -f /usr/bin/python3)" ] &&
	PYS="$PYS $OTHER"
if [ -z "$PYS" ]; then
	echo "no python3: skipped"
	exit 77
fi

for PY in $PYS; do
	# every planted leak at exit, its innermost Python frame the allocating line
	expect_status 0 "$REC" -q -f -o rec.mscap -- "$PY" "$PROG"
	expect_status 0 "$BIN/memscope-leaks" -q --kinds exit --format json rec.mscap
	check_py "$PY: planted leaks without their Python lines" "$WORK/out" "$PROG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
prog = sys.argv[2]
lines = {}
for n, text in enumerate(open(prog), 1):
    if "# leak:" in text:
        lines[text.split("# leak:")[1].strip()] = n
MiB = 1 << 20
# name: sizes (bytearray(n) asks n + 1), innermost function, a frame expected below it
want = {
    "function": ([24 * MiB + 1], "in_function", "): main"),
    "thread": ([3 * MiB + 2], "thread_body", "threading.py"),
    "generator": ([2 * MiB + 3, 2 * MiB + 4, 2 * MiB + 5], "generator", "): main"),
    "ctypes": ([5 * MiB + 5], "through_ctypes", "): main"),
}
for name, (sizes, func, below) in want.items():
    top = "%s(%d): %s" % (prog, lines[name], func)
    for size in sizes:
        got = [x for x in d["leaks"] if x["size"] == size and x["kind"] == "exit"]
        assert len(got) == 1, (name, size, got)
        py = got[0]["stack"]["python"]
        assert py and py[0] == top, (name, py)
        assert any(below in f for f in py[1:]), (name, py)
        assert got[0]["stack"]["c"], (name, got[0]["stack"])
PY
	# the peak's heaviest Python stack ends at the line holding most memory
	expect_status 0 "$BIN/memscope-export" -q --format folded --metric peak --stack python rec.mscap
	check_py "$PY: the peak's heaviest stack is not the function's line" "$WORK/out" "$PROG" <<'PY'
import sys
prog = sys.argv[2]
n = [i for i, t in enumerate(open(prog), 1) if "# leak:function" in t][0]
rows = [l.rstrip("\n").rsplit(" ", 1) for l in open(sys.argv[1]) if l.strip()]
path, weight = max(rows, key=lambda r: int(r[1]))
assert path.split(";")[-1] == "%s(%d): in_function" % (prog, n), (path, weight)
assert int(weight) >= 24 << 20, weight
PY
	# --stack c: no Python frame recorded; --stack python: no native frame
	expect_status 0 "$REC" -q -f --stack c -o c.mscap -- "$PY" "$PROG"
	expect_status 0 "$BIN/memscope-leaks" -q --kinds exit --format json c.mscap
	check_py "$PY: --stack c recorded Python frames" "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["leaks"] and not [x for x in d["leaks"] if x["stack"]["python"]]
assert [x for x in d["leaks"] if x["size"] == 24 * (1 << 20) + 1 and x["stack"]["c"]]
PY
	expect_status 0 "$REC" -q -f --stack python -o py.mscap -- "$PY" "$PROG"
	expect_status 0 "$BIN/memscope-leaks" -q --kinds exit --format json py.mscap
	check_py "$PY: --stack python recorded native frames" "$WORK/out" "$PROG" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert not [x for x in d["leaks"] if x["stack"]["c"]]
got = [x for x in d["leaks"] if x["size"] == 5 * (1 << 20) + 5]
assert len(got) == 1 and got[0]["stack"]["python"][0].startswith(sys.argv[2] + "("), got
PY
done

# the option's grammar
expect_status 2 "$REC" --stack python,python -- true
expect_err_line "^memscope-record: --stack: expected"
expect_status 2 "$REC" --stack c, -- true
expect_err_line "^memscope-record: --stack: expected"
expect_status 0 "$REC" -q -f --stack c:8,python -o t.mscap -- true
finish
