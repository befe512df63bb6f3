# Shared by test_slurm.sh and test_parallel.sh (sourced, POSIX sh, after tests/cli/lib.sh):
# memscope-batch(1)'s recipes taken from the page itself, so that the page and the tests cannot
# drift, a run's tree of inputs to run them on, what one local run makes of it, and the checks of
# what a recipe writes.

# give_up MESSAGE: the test ends here, failed: a FAIL line with MESSAGE, the summary line, exit 1
give_up() {
	bad "$1"
	finish
	exit
}

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

# local_run TREE SRC GEN_RANKS SHARDS: the run's tree in TREE (ranks_tree TREE SRC GEN_RANKS), and
# what one local run of memscope-batch (first on PATH) makes of it, in $WORK/local.csv and
# $WORK/local.err: every input listed is a row, at least 2 per shard of SHARDS; the tree has inputs
# that cannot be read, each a row and a line naming it, and the exit status is 3. Sets want (the
# run's exit status) and n (the inputs listed).
local_run() {
	ranks_tree "$1" "$2" "$3" || bad "no tree in $1"
	memscope-batch -q --format csv -o "$WORK/local.csv" "$1" 2>"$WORK/local.err"
	want=$?
	n=$(memscope-batch --list "$1" | wc -l)
	if [ "$n" -ge $((2 * $4)) ] && [ "$(grep -c '^input,' "$WORK/local.csv")" -eq "$n" ]; then ok; else
		bad "local run: $n inputs listed, $(grep -c '^input,' "$WORK/local.csv") rows"
	fi
	# the status column by its name (no comma in the tree's paths)
	n_bad=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "status") c = i }
		$1 == "input" && $c != "ok"' "$WORK/local.csv" | wc -l)
	if [ "$n_bad" -ge 1 ] && [ "$(wc -l <"$WORK/local.err")" -eq "$n_bad" ] && [ "$want" -eq 3 ]; then ok; else
		bad "local run: $n_bad inputs failed, exit $want (wanted 3): $(cat "$WORK/local.err")"
	fi
}

# check_parts DIR SHARDS: DIR/parts/I.part, for I from 0 to SHARDS - 1, is the part of shard
# I/SHARDS: its header line and every SHARDS-th of the n inputs local_run listed, from the I-th
check_parts() {
	for i in $(seq 0 $(($2 - 1))); do
		part=$1/parts/$i.part
		rows=$(((n - i + $2 - 1) / $2))
		if head -n 1 "$part" 2>/dev/null | grep -q "\"shard\":$i,\"shards\":$2}" &&
			[ "$(wc -l <"$part")" -eq $((rows + 1)) ]; then ok; else
			bad "part $i: not shard $i/$2 with $rows inputs: $(head -c 300 "$part" 2>&1)"
		fi
	done
}

# fail_bin DIR SHARDS BIN: DIR/memscope-batch, which exits 4 when run for shard 1/SHARDS and runs
# BIN/memscope-batch otherwise (DIR first on PATH: a shard that fails)
fail_bin() {
	mkdir -p "$1" && cat >"$1/memscope-batch" <<EOF && chmod +x "$1/memscope-batch"
#!/bin/sh
case " \$* " in *" 1/$2 "*) exit 4 ;; esac
exec "$3/memscope-batch" "\$@"
EOF
}
