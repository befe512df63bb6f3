#!/bin/sh
# memscope-batch's GNU parallel recipe, as its man page gives it (EXAMPLES, "GNU parallel"), with
# "-S :" (this machine, no ssh, but parallel's remote-host path): the shards and the merge write
# byte for byte what one local run writes, with its exit status; a shard that fails stops the
# others and leaves no summary. Args: BIN_DIR SRC_DIR BUILD_DIR [GEN_RANKS]
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
. "$SRC/tests/batch/recipe.sh"
PAGE=$SRC/man/man1/memscope-batch.1
SHARDS=5

# parallel comes from tests/install-deps.sh: without it this test fails
command -v parallel >/dev/null || {
	bad "parallel not installed (tests/install-deps.sh installs it)"
	finish
	exit
}
[ -x "$BIN/memscope-batch" ] || {
	bad "no $BIN/memscope-batch"
	finish
	exit
}
PATH=$BIN:$PATH
# parallel keeps its files under $PARALLEL_HOME (~/.parallel otherwise)
PARALLEL_HOME=$WORK/parallel-home
export PATH PARALLEL_HOME
mkdir -p "$PARALLEL_HOME"

# the tree, and what one local run makes of it
TREE=$WORK/run
ranks_tree "$TREE" "$SRC" "$4" || bad "no tree in $TREE"
memscope-batch -q --format csv -o "$WORK/local.csv" "$TREE" 2>"$WORK/local.err"
want=$?
n=$(memscope-batch --list "$TREE" | wc -l)
if [ "$n" -ge $((2 * SHARDS)) ] && [ "$(grep -c '^input,' "$WORK/local.csv")" -eq "$n" ]; then ok; else
	bad "local run: $n inputs listed, $(grep -c '^input,' "$WORK/local.csv") rows"
fi
# the tree has inputs that cannot be read: each is a row and a line naming it, and exit 3
failed=$(awk -F, '$1 == "input" && $7 != "ok"' "$WORK/local.csv" | wc -l) # no comma in its paths
if [ "$failed" -ge 1 ] && [ "$(wc -l <"$WORK/local.err")" -eq "$failed" ] && [ "$want" -eq 3 ]; then ok; else
	bad "local run: $failed inputs failed, exit $want (wanted 3): $(cat "$WORK/local.err")"
fi

recipe_script "$PAGE" test_parallel.sh "$WORK/memscope-parallel.sh" ||
	bad "no GNU parallel recipe in $PAGE"

# run_recipe DIR: the recipe from DIR over the tree in SHARDS shards on ":"; its exit status
run_recipe() {
	mkdir -p "$1" && (cd "$1" && timeout 120 sh "$WORK/memscope-parallel.sh" "$TREE" "$SHARDS" : \
		>out 2>err)
}

# 1. shards and merge give the local run's report and exit status
run_recipe "$WORK/p1"
got=$?
if [ "$got" -eq "$want" ]; then ok; else bad "recipe exit $got, wanted $want: $(head -c 600 "$WORK/p1/err")"; fi
expect_same "$WORK/p1/summary.csv" "$WORK/local.csv"
for i in $(seq 0 $((SHARDS - 1))); do
	part=$WORK/p1/parts/$i.part
	rows=$(((n - i + SHARDS - 1) / SHARDS))
	if head -n 1 "$part" 2>/dev/null | grep -q "\"shard\":$i,\"shards\":$SHARDS}" &&
		[ "$(wc -l <"$part")" -eq $((rows + 1)) ]; then ok; else
		bad "part $i: not shard $i/$SHARDS with $rows inputs: $(head -c 300 "$part" 2>&1)"
	fi
done
if [ -n "$(ls -A "$PARALLEL_HOME")" ]; then ok; else bad "parallel did not use PARALLEL_HOME"; fi

# 2. a shard that fails (shard 1, through a memscope-batch that exits 4 for it, first on PATH):
# the recipe fails, later shards are not started (--halt now,fail=1, one at a time) and there is
# no summary
mkdir -p "$WORK/failbin"
cat >"$WORK/failbin/memscope-batch" <<EOF
#!/bin/sh
case " \$* " in *" 1/$SHARDS "*) exit 4 ;; esac
exec "$BIN/memscope-batch" "\$@"
EOF
chmod +x "$WORK/failbin/memscope-batch"
PATH=$WORK/failbin:$PATH run_recipe "$WORK/p2"
got=$?
if [ "$got" -ne 0 ] && [ -e "$WORK/p2/parts/0.part" ] && [ ! -e "$WORK/p2/parts/$((SHARDS - 1)).part" ] &&
	[ ! -e "$WORK/p2/summary.csv" ]; then ok; else
	bad "after a failed shard: exit $got, $(ls "$WORK/p2" "$WORK/p2/parts" | tr '\n' ' ')"
fi
finish
