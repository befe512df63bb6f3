#!/bin/sh
# memscope-record on real PyTorch (Debian's python3-torch, 1.13): a 6-step SGD training loop on CPU
# that keeps one tensor per step (train_torch.py) recorded without any change to it; the steps
# come from the sitecustomize hook (the optimizer's step() wrapped, or a torch.profiler schedule's
# ProfilerStep#N), and memscope-leaks reports the planted tensors as step leaks in the steps they
# were allocated in, with their exact size. Skipped (77) without torch for /usr/bin/python3.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
PY=/usr/bin/python3
if ! [ -x "$PY" ] || ! "$PY" -c 'import torch' >/dev/null 2>&1; then
	echo "SKIP: no torch for $PY (apt-get install python3-torch)"
	exit 77
fi
export PYTHONDONTWRITEBYTECODE=1
unset MEMSCOPE_RECORD_SPOOL MEMSCOPE_RECORD_OPTS MEMSCOPE_RECORD_MAIN PYTHONPATH PYTHONSTARTUP
cd "$WORK" || exit 1
TRAIN="$SRC/tests/record/train_torch.py"
FLOATS=12345 # the planted tensor: 12345 float32, a block of 49380 bytes per step

# check_py WHAT ARGS...: the python3 script read from stdin exits 0 with ARGS, else WHAT failed;
# what it prints is shown
check_py() {
	what=$1
	shift
	if python3 - "$@" >"$WORK/py.out" 2>&1; then
		ok
		cat "$WORK/py.out"
	else
		bad "$what: $(tail -5 "$WORK/py.out")"
	fi
}

# train MODE: the loop recorded into MODE.mscap, its step leaks in MODE.json
train() {
	PYTHONMALLOC=malloc expect_status 0 "$BIN/memscope-record" -q -o "$1.mscap" -- "$PY" "$TRAIN" \
		"$1" $FLOATS
	if [ "$(cat "$WORK/out")" = "ok 6" ] && [ ! -s "$WORK/err" ]; then ok; else
		bad "$1: train_torch.py printed '$(cat "$WORK/out")', stderr '$(head -c 300 "$WORK/err")'"
	fi
	expect_status 0 "$BIN/memscope-leaks" -q --kinds step --pool host --format json -o "$1.json" \
		"$1.mscap"
}

# leaks MODE STEPS...: the planted tensors are step leaks allocated in exactly STEPS, each
# detected in the next step, one block of FLOATS x 4 bytes per step whose innermost frame is
# torch's CPU allocator; with the optimizer's steps nothing else is reported, and every step's
# leak is the same blocks (the tensor's data, its TensorImpl, StorageImpl and Python object);
# with the profiler's, less than 4 KiB beside the tensor's data per step;
# with Python frames in the recording, the tensor's innermost Python frame is train_torch.py's LEAK
# line
leaks() {
	check_py "$1: step leaks" "$1" "$1.json" "$TRAIN" $FLOATS "$@" <<'PY'
import collections, json, sys
mode, path, train, floats = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
want_steps = [int(s) for s in sys.argv[6:]]
leaks = [x for x in json.load(open(path))["leaks"] if x["kind"] == "step"]
data = [x for x in leaks if x["size"] == 4 * floats]
got = sorted((x["alloc_step"], x["detected_step"]) for x in data)
assert got == [(s, s + 1) for s in want_steps], "tensor blocks in (step, detected) %s" % got
for x in data:
    assert "alloc_cpu" in x["stack"]["c"][0], x["stack"]["c"][:3]
per_step = collections.defaultdict(list)
for x in leaks:
    per_step[x["alloc_step"]].append(x["size"])
if mode == "optimizer":
    assert sorted(per_step) == want_steps, "steps with leaks %s" % sorted(per_step)
    shapes = {tuple(sorted(v)) for v in per_step.values()}
    assert len(shapes) == 1, "the steps' leaks differ: %s" % per_step
    extra = sum(per_step[want_steps[0]]) - 4 * floats
    assert 0 < extra < 1024, "the tensor's objects take %d bytes" % extra
    print("%s: steps %s each leak %d blocks, %d bytes (the tensor's %d + %d of its objects)" % (
        mode, want_steps, len(per_step[want_steps[0]]), 4 * floats + extra, 4 * floats, extra))
else:
    # the tensor's objects, and a few blocks of Python's and the profiler's own: the list's
    # growth, the last iteration's autograd nodes alive when stop() ends the last step
    assert sorted(per_step) == want_steps, "steps with leaks %s" % sorted(per_step)
    extra = {s: sum(v) - 4 * floats for s, v in sorted(per_step.items())}
    assert all(0 < e < 4096 for e in extra.values()), "bytes beside the tensor %s" % extra
    print("%s: steps %s each leak the tensor's %d bytes, and beside it (blocks, bytes) %s" % (
        mode, want_steps, 4 * floats,
        " ".join("%d:(%d,%d)" % (s, len(per_step[s]) - 1, extra[s]) for s in want_steps)))
line = [i + 1 for i, s in enumerate(open(train)) if "# LEAK" in s][0]
py = [x["stack"].get("python") or [] for x in data]
if any(py):
    for frames in py:
        assert frames and "train_torch.py(%d)" % line in frames[0], frames
    print("%s: the tensors' innermost Python frame is %s" % (mode, py[0][0]))
else:
    print("%s: no Python frames in the recording: the Python line not checked" % mode)
PY
}

# the optimizer's steps (torch 1.13 has no global optimizer hooks: step() is wrapped): the
# tensor kept after step k's optimizer step is in step k; a step runs from one optimizer step to
# the next and the last has no end, so steps 2 to 4 are checked (step 1 is skipped by default)
train optimizer
leaks optimizer 2 3 4
# a torch.profiler schedule: its 7 ProfilerStep ranges (start, then each prof.step()) are the
# steps, the one stop() ends is empty, so the tensors of steps 2 to 6 are checked; the profiler
# traces step 1 only, so that the trace it keeps is no leak of a step checked
train profiler
leaks profiler 2 3 4 5 6
# the recording's MSTX rows (its whole CSV would take about a gigabyte)
"$BIN/memscope-convert" -q --format csv -o - profiler.mscap | awk 'NR == 1 || /^[0-9]*,MSTX,/' \
	>profiler.csv
check_py "profiler: not 7 step ranges" profiler.csv <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["Event"] == "MSTX"]
starts = [r for r in rows if r["Event Type"] == "Range_start"]
assert len(starts) == 7 and all(r["Name"] == "step start" for r in starts), [r["Name"] for r in rows]
assert len(rows) == 14, len(rows)
print("profiler: 7 step ranges")
PY
finish
