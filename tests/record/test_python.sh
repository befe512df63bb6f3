#!/bin/sh
# memscope-record on Python programs: a leak planted with ctypes found at exit, the exit status
# passed through, training steps marked by the sitecustomize hook (through a fake torch), and the
# hook's manners without a recording (silent, the user's own sitecustomize still runs).
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
REC="$BIN/memscope-record"
HOOKS="$BIN/python"
DATA="$SRC/tests/record/python"
# the interpreter itself, not a wrapper script that runs it (pyenv's shims are bash scripts)
PY=$(python3 -c 'import sys; print(sys.executable)')
export PYTHONDONTWRITEBYTECODE=1
unset MEMSCOPE_RECORD_SPOOL MEMSCOPE_RECORD_OPTS MEMSCOPE_RECORD_MAIN PYTHONPATH PYTHONSTARTUP
cd "$WORK" || exit 1

# check_py WHAT SCRIPT ARGS...: the python3 SCRIPT (read from stdin) exits 0, else WHAT failed
check_py() {
	what=$1
	shift
	if python3 - "$@" >"$WORK/py.err" 2>&1; then ok; else bad "$what: $(tail -5 "$WORK/py.err")"; fi
}

# a) a block malloc'd through ctypes and never freed is unreleased at exit, with its exact size;
# the program's exit status is memscope-record's
PYTHONMALLOC=malloc expect_status 3 "$REC" -q -o exit.mscap -- "$PY" "$DATA/leak_exit.py" 123457 3
expect_status 0 "$BIN/memscope-leaks" -q --kinds exit --format json exit.mscap
check_py "no exit leak of 123457 bytes" "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mine = [x for x in d["leaks"] if x["size"] == 123457]
assert len(mine) == 1 and mine[0]["kind"] == "exit" and mine[0]["pool"] == "HOST", mine
assert all(x["kind"] == "exit" for x in d["leaks"])
PY
PYTHONMALLOC=malloc expect_status 0 "$REC" -q -o exit0.mscap -- "$PY" "$DATA/leak_exit.py" 1 0

# b) steps through a fake torch (tests/record/python/torch): it tests our hook's wiring (the
# lazy registration when torch.optim.optimizer is imported, the global step pre hook, one step
# per iteration with two optimizers, a step that raises), not torch; steps.py runs 4 iterations
mkdir "$WORK/site" && cp -R "$DATA/torch" "$WORK/site/" || exit 1
# ranges_ok CSV: 4 Range_start "step start" and 3 Range_end, each step ended by its own id when
# the next starts, the last left open (a step runs from one optimizer step to the next)
ranges_ok() {
	check_py "$1: steps not 4 well-formed ranges" "$1" <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["Event"] == "MSTX"]
got = [(r["Event Type"], r["Name"]) for r in rows]
want = []
for i in range(1, 4):
    want += [("Range_start", "step start"), ("Range_end", "Range end from id %d" % i)]
assert got == want + [("Range_start", "step start")], got
PY
}
LEAK=54321
PYTHONPATH="$WORK/site" expect_status 0 "$REC" -q -o two.mscap -- "$PY" "$DATA/steps.py" two $LEAK
expect_status 0 "$BIN/memscope-convert" -q two.mscap -o two.csv
ranges_ok two.csv
# a host block allocated in step 2 and alive at the end of step 3 is a step leak (steps 0 and 1
# are skipped by default); the blocks freed inside their steps are not
expect_status 0 "$BIN/memscope-leaks" -q --kinds step --pool host --format json two.mscap
check_py "no step leak of $LEAK bytes in step 2" "$WORK/out" $LEAK <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mine = [x for x in d["leaks"] if x["size"] == int(sys.argv[2])]
assert len(mine) == 1, d["leaks"]
assert (mine[0]["kind"], mine[0]["alloc_step"], mine[0]["detected_step"]) == ("step", 2, 3), mine
assert not [x for x in d["leaks"] if 7000 <= x["size"] <= 7003 or x["size"] == 6000], d["leaks"]
PY
# step 2 raises: its range ends when step 3 starts
PYTHONPATH="$WORK/site" expect_status 0 "$REC" -q -o raise.mscap -- "$PY" "$DATA/steps.py" raise 0
expect_status 0 "$BIN/memscope-convert" -q raise.mscap -o raise.csv
ranges_ok raise.csv
# torch 1.13's shape (no global hooks): every Optimizer subclass's step() wrapped instead, the
# same steps and leaks
FAKE_TORCH_NO_GLOBAL_HOOKS=1 PYTHONPATH="$WORK/site" expect_status 0 "$REC" -q -o old.mscap -- \
	"$PY" "$DATA/steps.py" two $LEAK
expect_status 0 "$BIN/memscope-convert" -q old.mscap -o old.csv
ranges_ok old.csv
expect_status 0 "$BIN/memscope-leaks" -q --kinds step --pool host --format json old.mscap
check_py "torch without global hooks: no step leak of $LEAK bytes in step 2" "$WORK/out" $LEAK <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
mine = [(x["kind"], x["alloc_step"], x["detected_step"]) for x in d["leaks"] if x["size"] == int(sys.argv[2])]
assert mine == [("step", 2, 3)], d["leaks"]
PY
# a torch with neither: one line says no step hook is installed, the program runs on
mkdir -p "$WORK/bare/torch/optim" || exit 1
: >"$WORK/bare/torch/__init__.py"
: >"$WORK/bare/torch/optim/__init__.py"
: >"$WORK/bare/torch/optim/optimizer.py"
PYTHONPATH="$WORK/bare" expect_status 0 "$REC" -q -o bare.mscap -- "$PY" -c 'import torch.optim.optimizer'
expect_err_line "^memscope-record: no PyTorch step hook installed: torch\.optim\.optimizer has neither register_optimizer_step_pre_hook nor an Optimizer class$"

# c) without a recording: importing the hook prints nothing, raises nothing, installs nothing
# (even with the launcher's variable set, without the shim no optimizer hook is registered)
PYTHONPATH="$HOOKS" expect_status 0 "$PY" -c 'import sitecustomize
import sys
assert not [f for f in sys.meta_path if hasattr(f, "_memscope_record")]'
if [ ! -s "$WORK/out" ] && [ ! -s "$WORK/err" ]; then ok; else bad "hook not silent: $(cat "$WORK/out" "$WORK/err")"; fi
PYTHONPATH="$HOOKS:$WORK/site" MEMSCOPE_RECORD_SPOOL="$WORK/nospool" expect_status 0 "$PY" -c '
import sys, torch
from torch.optim import optimizer
assert [f for f in sys.meta_path if hasattr(f, "_memscope_record")]
torch.optim.SGD([1.0]).step()
assert not optimizer._global_optimizer_pre_hooks and not optimizer._global_optimizer_post_hooks'
if [ ! -s "$WORK/out" ] && [ ! -s "$WORK/err" ]; then ok; else bad "hook not silent: $(cat "$WORK/out" "$WORK/err")"; fi

# a user's sitecustomize later on PYTHONPATH still runs, as the one `import sitecustomize` gives,
# with and without a recording
mkdir "$WORK/user" || exit 1
cat >"$WORK/user/sitecustomize.py" <<'PY'
import os
with open(os.environ["USER_SITE_MARK"], "a") as f:
    f.write("ran\n")
PY
USER_SITE_MARK="$WORK/mark1" PYTHONPATH="$HOOKS:$WORK/user" expect_status 0 "$PY" -c '
import sitecustomize, sys
assert sitecustomize.__file__ == sys.argv[1] + "/sitecustomize.py", sitecustomize.__file__' "$WORK/user"
if [ "$(cat "$WORK/mark1" 2>/dev/null)" = ran ]; then ok; else bad "user sitecustomize did not run"; fi
USER_SITE_MARK="$WORK/mark2" PYTHONPATH="$WORK/user" expect_status 0 "$REC" -q -o user.mscap -- "$PY" -c pass
if [ "$(cat "$WORK/mark2" 2>/dev/null)" = ran ]; then ok; else bad "user sitecustomize did not run under memscope-record"; fi
# a second copy of our hook between ours and the user's (an installed one under a build tree's)
# installs no second finder and hands on to the user's, which runs once
mkdir "$WORK/copy" && cp "$HOOKS/sitecustomize.py" "$WORK/copy/" || exit 1
USER_SITE_MARK="$WORK/mark3" PYTHONPATH="$HOOKS:$WORK/copy:$WORK/user" MEMSCOPE_RECORD_SPOOL="$WORK/nospool" \
	expect_status 0 "$PY" -c '
import sitecustomize, sys
assert sitecustomize.__file__ == sys.argv[1] + "/sitecustomize.py", sitecustomize.__file__
assert len([f for f in sys.meta_path if hasattr(f, "_memscope_record")]) == 1' "$WORK/user"
if [ "$(cat "$WORK/mark3" 2>/dev/null)" = ran ]; then ok; else bad "user sitecustomize not run once after a second copy: $(cat "$WORK/mark3" "$WORK/err")"; fi
# an error in it is reported by Python as it is without our hook
printf 'raise ValueError("user sitecustomize fails")\n' >"$WORK/user/sitecustomize.py"
PYTHONPATH="$WORK/user" expect_status 0 "$PY" -c 'print("main ran")'
mv "$WORK/out" "$WORK/plain.out"
mv "$WORK/err" "$WORK/plain.err"
PYTHONPATH="$HOOKS:$WORK/user" expect_status 0 "$PY" -c 'print("main ran")'
expect_same "$WORK/out" "$WORK/plain.out"
expect_same "$WORK/err" "$WORK/plain.err"
if grep -q 'user sitecustomize fails' "$WORK/err"; then ok; else bad "user sitecustomize error not reported: $(cat "$WORK/err")"; fi
# the interpreters' own sitecustomize (Debian's /usr/lib/python3.X/sitecustomize.py) is the one
# `import sitecustomize` gives with our hook first on the path, as it is without
for py in "$PY" /usr/bin/python3; do
	[ -x "$py" ] || continue
	show='import sys; m = sys.modules.get("sitecustomize"); print(getattr(m, "__file__", None))'
	plain=$("$py" -c "$show" 2>&1)
	hooked=$(PYTHONPATH="$HOOKS" "$py" -c "$show" 2>&1)
	case $plain in
	None) want="$HOOKS/sitecustomize.py" ;;
	*) want=$plain ;;
	esac
	if [ "$hooked" = "$want" ]; then ok; else bad "$py: sitecustomize $hooked, wanted $want"; fi
done

finish
