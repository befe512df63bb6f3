#!/bin/sh
# memscope-batch's GNU parallel recipe, as its man page gives it (EXAMPLES, "GNU parallel"), with
# "-S :" (this machine, no ssh, but parallel's remote-host path): the shards and the merge write
# byte for byte what one local run writes, with its exit status; a shard that fails stops the
# others and leaves no summary. Args: BIN_DIR SRC_DIR BUILD_DIR [GEN_RANKS]
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
# shellcheck source=tests/batch/recipe.sh
. "$SRC/tests/batch/recipe.sh"
PAGE=$SRC/man/man1/memscope-batch.1
SHARDS=5

# parallel comes from tests/install-deps.sh: without it this test fails
command -v parallel >/dev/null || give_up "parallel not installed (tests/install-deps.sh installs it)"
[ -x "$BIN/memscope-batch" ] || give_up "no $BIN/memscope-batch"
PATH=$BIN:$PATH
# parallel keeps its files under $PARALLEL_HOME (~/.parallel otherwise)
PARALLEL_HOME=$WORK/parallel-home
export PATH PARALLEL_HOME
mkdir -p "$PARALLEL_HOME"

# the tree, and what one local run makes of it
TREE=$WORK/run
local_run "$TREE" "$SRC" "$4" "$SHARDS"

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
check_parts "$WORK/p1" "$SHARDS"
if [ -n "$(ls -A "$PARALLEL_HOME")" ]; then ok; else bad "parallel did not use PARALLEL_HOME"; fi

# 2. a shard that fails (shard 1, through a memscope-batch that exits 4 for it, first on PATH):
# the recipe fails, later shards are not started (--halt now,fail=1, one at a time) and there is
# no summary
fail_bin "$WORK/failbin" "$SHARDS" "$BIN"
PATH=$WORK/failbin:$PATH run_recipe "$WORK/p2"
got=$?
if [ "$got" -ne 0 ] && [ -e "$WORK/p2/parts/0.part" ] && [ ! -e "$WORK/p2/parts/$((SHARDS - 1)).part" ] &&
	[ ! -e "$WORK/p2/summary.csv" ]; then ok; else
	bad "after a failed shard: exit $got, $(ls "$WORK/p2" "$WORK/p2/parts" | tr '\n' ' ')"
fi
finish
