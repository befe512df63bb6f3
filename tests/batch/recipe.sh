# Shared by test_slurm.sh and test_parallel.sh (sourced, POSIX sh): memscope-batch(1)'s recipes
# taken from the page itself, so that the page and the tests cannot drift, and a run's tree of
# inputs to run them on.

# recipe_script PAGE NAME OUT: the literal display that follows the comment
# '.\" tests/batch/NAME runs the display that follows' in PAGE, its mdoc escapes undone (\e is a
# backslash, \& nothing), into OUT; 1 when there is none
recipe_script() {
	awk -v mark=".\\\\\" tests/batch/$2 runs the display that follows" '
		$0 == mark { want = 1; next }
		want && /^\.Bd / { on = 1; want = 0; next }
		on && /^\.Ed/ { exit }
		on { print }' "$1" | sed 's/\\e/\\/g; s/\\&//g' >"$3"
	[ -s "$3" ]
}

# ranks_tree OUT SRC [GEN_RANKS]: a run's tree in OUT (which must not exist): GEN_RANKS's
# ("gen_ranks tree OUT") when given, else the bundled samples SRC/testdata in msMemScope's
# folders, rank<R>/msmemscope_<pid>_<ts>_ascend/device_<D>/dump/memscope_dump_<ts>.csv for ranks
# 0-5 and devices 0-1, a python_trace file beside rank 0's device 0, and two inputs that cannot
# be read: rank 4's device 1 is not a dump, rank 5's device 1 is empty
ranks_tree() {
	if [ -n "$3" ]; then
		"$3" tree "$1" >/dev/null
		return
	fi
	set -- "$1" "$2/testdata" baseline.csv leaks.csv leaks/steps_mstx.csv leaks/steps_system.csv \
		export/peak.csv export/ops.csv leaks/groups.csv memscope_dump_20250428113810.csv \
		stacks_crlf.csv leaks/profiler_steps.csv memscope_dump_20250428113811.csv \
		leaks/mark_legacy.csv
	out=$1
	data=$2
	shift 2
	r=0
	while [ "$r" -le 5 ]; do
		for d in 0 1; do
			dir=$out/rank$r/msmemscope_$((4000 + r))_20250428113810_ascend/device_$d/dump
			mkdir -p "$dir" && cp "$data/$1" "$dir/memscope_dump_2025042811381$d.csv" || return 1
			shift
		done
		r=$((r + 1))
	done
	cp "$data/db/python_trace.csv" \
		"$out/rank0/msmemscope_4000_20250428113810_ascend/device_0/dump/python_trace_4000.csv" &&
		echo 'this is not a dump' >"$out/rank4/msmemscope_4004_20250428113810_ascend/device_1/dump/memscope_dump_20250428113811.csv" &&
		: >"$out/rank5/msmemscope_4005_20250428113810_ascend/device_1/dump/memscope_dump_20250428113811.csv"
}
