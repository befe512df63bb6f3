#!/bin/sh
# Golden CLI cases of the PyTorch CUDA memory snapshot reader (formats/torch-snapshot.md): every
# scenario of make_snapshot.py at protocols 2 to 5 (one gzip-compressed, one under another name)
# through memscope-convert against the events and figures the generator computed from what it
# put in; the end state against the snapshots' own segments (check_end_state.py); an empty
# snapshot refused; the streamed writer of the benchmark; the hostile files of make_hostile.py
# (exit 3, one line naming the file and the offset, no output left, never a crash); the SVG
# flame graph; memscope-leaks on the planted tensor, its stacks without the allocator's frames;
# memscope-batch on torchtitan's per-rank names.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
C="$BIN/memscope-convert"
G="$SRC/tests/gpu"
TAB=$(printf '\t')
# the scripts import make_snapshot.py: no __pycache__ written into the source tree
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
cd "$WORK" || exit 1

# check MODE OUT JSON: check_snapshot.py agrees (its first lines otherwise)
check() {
	if python3 "$G/check_snapshot.py" "$@" >"$WORK/check.out" 2>&1; then ok; else bad "$(head -4 "$WORK/check.out")"; fi
}

# make ARGS...: make_snapshot.py ARGS, or a failure said
make() {
	python3 "$G/make_snapshot.py" "$@" >"$WORK/make.out" 2>&1 || { bad "make_snapshot $*: $(tail -3 "$WORK/make.out")"; return 1; }
}

# 1. every scenario at every protocol: the dump CSV against the generator's expectations
for s in loop ringcut nohistory special deep opcodes expandable shared; do
	for p in 2 3 4 5; do
		# opcodes is assembled by hand at protocol 4 whatever -p says: once
		[ $s = opcodes ] && [ $p -ne 4 ] && continue
		make -p $p $s $s-p$p.pickle || continue
		expect_status 0 "$C" -q -o $s-p$p.csv $s-p$p.pickle
		check csv $s-p$p.csv $s-p$p.pickle.json
	done
done
# the end state (blocks holding a tensor, their requested bytes, the bytes reserved, per device)
# is the snapshot's own segments, read by Python's pickle
if python3 "$G/check_end_state.py" "$BIN" loop-p4.pickle ringcut-p2.pickle nohistory-p5.pickle \
	special-p3.pickle expandable-p4.pickle expandable-p2.pickle shared-p5.pickle >end.out 2>&1; then
	ok
else
	bad "end state: $(grep -v ': ok$' end.out | head -3)"
fi
# an empty snapshot (no segments, trace entries or annotations) says so in one line, exit 3
for p in 2 5; do
	make -p $p empty empty-p$p.pickle || continue
	expect_status 3 "$C" -q -o empty.csv empty-p$p.pickle
	if [ "$(wc -l <"$WORK/err")" -eq 1 ] &&
		grep -q "^memscope-convert: empty-p$p.pickle: an empty PyTorch memory snapshot" "$WORK/err" &&
		[ ! -e empty.csv ]; then ok; else bad "empty snapshot: $(cat "$WORK/err")"; fi
done
# the benchmark's streamed writer, small: pickle.load gives its object back, and memscope reads
# what the oracle computed as it streamed
if make stream stream.pickle --size 300000 --selfcheck; then
	expect_status 0 "$C" -q -o stream.csv stream.pickle
	check csv stream.csv stream.pickle.json
fi
# recognised by content: gzip-compressed, and under a name that says nothing
gzip -c loop-p4.pickle >loop.gz
expect_status 0 "$C" -q -o gz.csv loop.gz
check csv gz.csv loop-p4.pickle.json
cp loop-p5.pickle snapshot_without_extension
expect_status 0 "$C" -q -o noext.csv snapshot_without_extension
check csv noext.csv loop-p5.pickle.json
if command -v zstd >/dev/null 2>&1; then
	zstd -q -c ringcut-p2.pickle >ringcut.zst
	expect_status 0 "$C" -q -o zst.csv ringcut.zst
	check csv zst.csv ringcut-p2.pickle.json
fi

# 2. hostile files (make_hostile.py's table: NAME STATUS LO HI WHY): invalid input is exit 3 and
# one line naming the file and an offset in LO..HI, with no output left behind; what the spec
# leaves open (0|3) may be either; nothing crashes (a signal is a status above 128)
python3 "$G/make_hostile.py" hostile || bad "make_hostile.py failed"
# err_offset FILE: the offset the one stderr line gives after FILE ("FILE: byte 123: ...")
err_offset() {
	sed -n -e "s|^memscope-convert: $1: byte \([0-9][0-9]*\): .*|\1|p" "$WORK/err" | head -1
}
n_hostile=0
while IFS="$TAB" read -r name status lo hi why; do
	f=hostile/$name.pickle
	n_hostile=$((n_hostile + 1))
	"$C" -q -o h.csv "$f" >"$WORK/out" 2>"$WORK/err"
	rc=$?
	lines=$(wc -l <"$WORK/err")
	case "$status:$rc" in
	3:3 | "0|3:3")
		if [ "$lines" -ne 1 ] || ! grep -q "^memscope-convert: $f:" "$WORK/err"; then
			bad "$name ($why): not one line naming $f: $(head -c 300 "$WORK/err")"
		elif [ -e h.csv ]; then
			bad "$name ($why): output left behind"
		elif [ "$lo" != - ]; then
			off=$(err_offset "$f")
			if [ -n "$off" ] && [ "$off" -ge "$lo" ] && [ "$off" -le "$hi" ]; then ok; else
				bad "$name ($why): offset '$off' not in $lo..$hi: $(cat "$WORK/err")"
			fi
		else
			ok
		fi
		;;
	0:0 | "0|3:0") ok ;;
	*) bad "$name ($why): exit $rc, wanted $status: $(head -c 300 "$WORK/err")" ;;
	esac
	rm -f h.csv
done <hostile/hostile.tsv
[ "$n_hostile" -gt 400 ] && ok || bad "only $n_hostile hostile cases read"
ls core* >/dev/null 2>&1 && bad "core file left by a hostile input" || ok

# 3. the flame graph draws the Python frames (the planted tensor's: wide enough to be drawn)
expect_status 0 "$BIN/memscope-export" -q --format svg -o loop.svg loop-p4.pickle
check svg loop.svg loop-p4.pickle.json

# 4. memscope-leaks: the planted tensor is the one step leak, in step 2, with its size; the text
# report says so too
expect_status 0 "$BIN/memscope-leaks" -q --format json -o leaks.json loop-p4.pickle
check leaks leaks.json loop-p4.pickle.json
expect_status 0 "$BIN/memscope-leaks" -q --kinds step loop-p2.pickle
size=$(python3 -c 'import json,sys; print("%.2f MiB" % (json.load(open(sys.argv[1]))["planted"]["size"] / 2**20))' loop-p2.pickle.json)
grep -q "^#1 CUDA_CACHING $size in 1 block, allocated in step 2$" "$WORK/out" && ok ||
	bad "leaks text report: no leak of $size in step 2: $(head -3 "$WORK/out")"
# the stacks show the caller: none of the allocator's or the interpreter's own frames
expect_status 0 "$BIN/memscope-leaks" -q loop-p4.pickle
if grep -q "CUDACachingAllocator\|_PyEval_EvalFrameDefault\|Py_RunMain\|_start\$" "$WORK/out"; then
	bad "leaks text report shows the allocator's frames: $(grep -m1 "CUDACachingAllocator\|_PyEval\|Py_RunMain\|_start\$" "$WORK/out")"
else
	ok
fi

# 5. memscope-batch finds torchtitan's per-rank snapshots and numbers their ranks
mkdir -p run/iteration_10
cp loop-p4.pickle run/iteration_10/rank0_memory_snapshot.pickle
cp ringcut-p4.pickle run/iteration_10/rank1_memory_snapshot.pickle
expect_status 0 "$BIN/memscope-batch" --list run
ranks=$(awk -F"$TAB" '{ n = split($4, p, "/"); printf "%s=%s ", $2, p[n] }' "$WORK/out")
[ "$ranks" = "0=rank0_memory_snapshot.pickle 1=rank1_memory_snapshot.pickle " ] && ok ||
	bad "batch --list: '$ranks' ($(cat "$WORK/out"))"
expect_status 0 "$BIN/memscope-batch" -q --format json -o batch.json run
python3 - batch.json <<'PY' && ok || bad "batch report: $(head -c 400 batch.json)"
import json, sys
rows = [r for r in map(json.loads, open(sys.argv[1])) if r["type"] == "input"]
assert [(r["rank"], r["format"], r["status"]) for r in rows] == [
    (0, "torch-snapshot", "ok"), (1, "torch-snapshot", "ok")], rows
PY

finish
