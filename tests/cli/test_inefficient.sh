#!/bin/sh
# Golden CLI cases of memscope-inefficient: each rule's boundaries on hand-built dumps, the report
# formats, the annotated copy, and bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
TOOL="$BIN/memscope-inefficient"
I=$TOOL
cd "$SRC/testdata/inefficient" || exit 1

# expect_flagged WANT ARGS...: exit 0 and the flagged "pid:allocation_id:types" (CSV report,
# in rank order) are WANT
expect_flagged() {
	wanted=$1
	shift
	expect_status 0 "$I" -q --format csv "$@"
	got=$(awk -F, 'NR > 1 { printf "%s%s:%s:%s", sep, $3, $6, $9; sep = " " }' "$WORK/out")
	if [ "$got" = "$wanted" ]; then ok; else bad "$*: flagged '$got', wanted '$wanted'"; fi
}

# rules.csv (testdata/README.txt has its API timeline): with threshold 3, B is freed late (API 13
# allocated between its last use in API 3 and its free in API 14); A is early (API 4 freed between
# its MALLOC in API 2, where it was also written, and its first use elsewhere, API 5) and late;
# D is idle (uses 4 APIs apart) while C (3 apart, twice) and A (3 apart) are not; C and D are
# freed in the API of their last use: not late; E and G are early; B's only use is in its MALLOC's
# API: not early
expect_out rules_t3.txt --idle-threshold 3 rules.csv
expect_out rules_t3.csv --idle-threshold 3 --format csv rules.csv
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation 100:5:temporary_idleness 100:8:early_allocation 100:6:early_allocation" --idle-threshold 3 rules.csv
# threshold N+1 = 4: D's distance of 4 is no longer above it; the default 3000 neither
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation 100:8:early_allocation 100:6:early_allocation" --idle-threshold 4 rules.csv
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation 100:8:early_allocation 100:6:early_allocation" rules.csv
# --kinds and --min-size filter what is flagged, not how APIs are counted
expect_flagged "100:2:early_allocation 100:8:early_allocation 100:6:early_allocation" --idle-threshold 3 --kinds early_allocation rules.csv
expect_flagged "100:5:temporary_idleness" --idle-threshold 3 --types temporary_idleness,temporary_idleness rules.csv
# --kinds, as in memscope-leaks; --types, its older spelling, does the same byte for byte
expect_alias 0 --kinds=early_allocation,temporary_idleness --types=early_allocation,temporary_idleness --idle-threshold 3 rules.csv
expect_alias 0 --kinds=all --types=all -q --format json rules.csv
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation" --idle-threshold 3 --min-size 1M rules.csv
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation 100:5:temporary_idleness" --idle-threshold 3 --min-size 8KiB rules.csv
expect_flagged "100:3:late_deallocation 100:2:early_allocation;late_deallocation 100:5:temporary_idleness 100:8:early_allocation" --idle-threshold 3 --min-size 2048 rules.csv

# --top: the ranking is cut, the summary still counts every block
expect_status 0 "$I" -q --idle-threshold 3 --top 2 rules.csv
if [ "$(grep -c '^#' "$WORK/out")" -eq 2 ] && grep -q '^(3 more block(s) not shown)$' "$WORK/out" &&
	grep -q '^flagged blocks  *5  *3.01 MiB$' "$WORK/out"; then ok; else bad "--top 2"; fi
expect_flagged "100:3:late_deallocation" --idle-threshold 3 --top 1 rules.csv
expect_status 2 "$I" --top -1 rules.csv

# PTA and ATB count APIs apart (an ATB free does not make P early, a PTA free does not make R
# early); ops on two threads share one in-op flag, so thread 202's rows after thread 201's op
# ends are APIs of their own and W is freed late
expect_out families_threads.txt families_threads.csv
expect_flagged "200:1:late_deallocation 200:3:late_deallocation 200:6:late_deallocation 200:5:early_allocation" families_threads.csv
# two processes in one file with the same IDs and allocation ids: counted apart
expect_out processes.txt processes.csv
# shadow rows are not APIs (L is alive at exit, not late); a PTA_WORKSPACE use counts in the
# PTA family (N is early); a HAL use is ignored; untracked rows are reported on stderr, -q or not
expect_out differences.txt differences.csv
expect_status 0 "$I" -q differences.csv
if grep -q '^memscope-inefficient: differences.csv: 2 ACCESS or FREE row(s) of no live block (first: process 400, ID 5)' "$WORK/err"; then ok; else bad "untracked rows not reported: $(cat "$WORK/err")"; fi
expect_status 0 "$I" differences.csv
if grep -q '3 shadow:true row(s)' "$WORK/err" && grep -q '1 ACCESS row(s) of pools other than PTA and ATB ignored' "$WORK/err"; then ok; else bad "shadow/other-pool notes: $(cat "$WORK/err")"; fi

# the JSON report: fields, evidence, and a summary that agrees with the blocks
expect_status 0 "$I" -q --idle-threshold 3 --format json rules.csv
if python3 - "$WORK/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
b = d["blocks"]
assert [x["allocation_id"] for x in b] == [3, 2, 5, 8, 6]
assert [x["rank"] for x in b] == [1, 2, 3, 4, 5]
a = b[1]
assert a["types"] == ["early_allocation", "late_deallocation"]
assert (a["alloc"]["api"], a["first_access"]["api"], a["last_access"]["api"], a["free"]["api"]) == (2, 2, 8, 12)
assert a["why"] == {"early_allocation": {"free_api": 4, "use_api": 5}, "late_deallocation": {"malloc_api": 11}}
assert a["free"]["op"] == "torch._ops.aten.sum.default" and b[0]["free"]["op"] is None
assert b[2]["why"] == {"temporary_idleness": {"from_api": 6, "to_api": 10}}
assert b[3]["free"] is None and b[4]["alloc"]["op"] is None
assert all(x["wasted_byte_apis"] == x["size"] * x["unused_apis"] for x in b)
assert [x["wasted_byte_apis"] for x in b] == sorted((x["wasted_byte_apis"] for x in b), reverse=True)
s = d["summary"]
assert s["blocks"] == 5 and s["bytes"] == sum(x["size"] for x in b)
for t in ("early_allocation", "late_deallocation", "temporary_idleness"):
    mine = [x for x in b if t in x["types"]]
    assert s["types"][t] == {"blocks": len(mine), "bytes": sum(x["size"] for x in mine)}, t
assert s["apis"] == {"PTA": 17, "ATB": 0} and s["idle_threshold"] == 3 and s["alive_at_end"] == 2
PY
then ok; else bad "json report of rules.csv"; fi

# the annotated copy: inefficient_type added to the flagged MALLOC rows, the rest byte for byte
expect_status 0 "$I" -q --idle-threshold 3 --annotate "$WORK/ann.csv" rules.csv
expect_same "$WORK/ann.csv" rules_annotated.csv
expect_same "$WORK/out" rules_t3.txt
# an existing inefficient_type (an online run's) is replaced, not repeated
expect_status 0 "$I" -q --annotate "$WORK/diff_ann.csv" differences.csv
if [ "$(diff differences.csv "$WORK/diff_ann.csv" | grep -c '^>')" -eq 1 ] &&
	grep -q 'used:3674112,inefficient_type:early_allocation}' "$WORK/diff_ann.csv"; then ok; else bad "existing inefficient_type not replaced"; fi
# CRLF line ends, a byte order mark and quoted multi-line call stacks survive
printf '\357\273\277' >"$WORK/crlf.csv"
sed 's/$/\r/' rules.csv >>"$WORK/crlf.csv"
expect_status 0 "$I" -q --idle-threshold 3 --annotate "$WORK/crlf_ann.csv" "$WORK/crlf.csv"
printf '\357\273\277' >"$WORK/crlf_want.csv"
sed 's/$/\r/' rules_annotated.csv >>"$WORK/crlf_want.csv"
expect_same "$WORK/crlf_ann.csv" "$WORK/crlf_want.csv"
awk 'NR == 20 { sub(/,,$/, ",\"train.py(3): step\nmodel.py(9): fwd\",\"libtorch.so(+0x1)\"") } { print }' rules.csv >"$WORK/stacks.csv"
awk 'NR == 20 { sub(/,,$/, ",\"train.py(3): step\nmodel.py(9): fwd\",\"libtorch.so(+0x1)\"") } { print }' rules_annotated.csv >"$WORK/stacks_want.csv"
expect_status 0 "$I" -q --idle-threshold 3 --annotate "$WORK/stacks_ann.csv" "$WORK/stacks.csv"
expect_same "$WORK/stacks_ann.csv" "$WORK/stacks_want.csv"
# nothing flagged: an identical copy
expect_status 0 "$I" -q --annotate "$WORK/same.csv" "$SRC/testdata/stacks_crlf.csv"
expect_same "$WORK/same.csv" "$SRC/testdata/stacks_crlf.csv"

# a capture file of the same rows gives the same report (less the input name and the MALLOC
# line, a record number there)
"$BIN/memscope-convert" -q -o "$WORK/rules.msc" rules.csv 2>/dev/null || bad "convert to capture"
expect_status 0 "$I" -q --idle-threshold 3 --format csv "$WORK/rules.msc"
cut -d, -f1,3-17,19- "$WORK/out" >"$WORK/cap.csv"
cut -d, -f1,3-17,19- rules_t3.csv >"$WORK/want.csv"
expect_same "$WORK/cap.csv" "$WORK/want.csv"
# ... but cannot be annotated
expect_status 3 "$I" -q --annotate "$WORK/x.csv" "$WORK/rules.msc"
expect_err_line 'needs a dump CSV and this is a capture file'
expect_absent "$WORK/x.csv"
# several inputs: one ranking, input named in each block
expect_status 0 "$I" -q --format csv rules.csv processes.csv
if [ "$(grep -c ',processes.csv,' "$WORK/out")" -eq 2 ] && [ "$(grep -c ',rules.csv,' "$WORK/out")" -eq 4 ]; then ok; else bad "two inputs"; fi
# standard input
expect_status 0 sh -c "\"$I\" -q --idle-threshold 3 - <rules.csv"
expect_same "$WORK/out" rules_t3.txt

# findings and the exit status
expect_status 1 "$I" -q --fail-on-finding -o "$WORK/r.txt" rules.csv
if head -1 "$WORK/r.txt" | grep -q '^Inefficient memory: 4 block(s)'; then ok; else bad "--fail-on-finding report"; fi
# an input without ACCESS rows could not be checked: no pass with --fail-on-finding (3, a line
# naming it on stderr, also with -q, and no report: nothing was found in what could be checked);
# without the option exit 0 and the line in the report too, text and JSON
expect_status 3 "$I" -q --fail-on-finding -o "$WORK/nochk.txt" "$SRC/testdata/baseline.csv"
expect_absent "$WORK/nochk.txt"
expect_err_line "^memscope-inefficient: $SRC/testdata/baseline.csv: no memory access events \\(ACCESS rows\\): not checked"
expect_status 0 "$I" -q "$SRC/testdata/baseline.csv"
if grep -q '^Inefficient memory: 0 block(s)' "$WORK/out"; then ok; else bad "baseline.csv report"; fi
if grep -qx "$SRC/testdata/baseline.csv: no memory access events (ACCESS rows): not checked" "$WORK/out"; then ok; else bad "not-checked line in the report: $(head -3 "$WORK/out")"; fi
expect_status 0 "$I" "$SRC/testdata/baseline.csv"
if grep -q 'baseline.csv: no memory access events (ACCESS rows): not checked' "$WORK/err"; then ok; else bad "no-ACCESS note: $(cat "$WORK/err")"; fi
# one input checked, the other not: the unchecked one is still named and still no pass
expect_status 3 "$I" -q --fail-on-finding --kinds temporary_idleness "$SRC/testdata/leaks.csv" rules.csv
expect_err_line "leaks.csv: no memory access events \\(ACCESS rows\\): not checked"
expect_status 1 "$I" -q --fail-on-finding "$SRC/testdata/leaks.csv" rules.csv
expect_status 0 "$I" -q --format json "$SRC/testdata/leaks.csv" rules.csv
if grep -q '"not_checked":\[{"input":"[^"]*leaks.csv","why":"no memory access events (ACCESS rows): not checked"}\]' "$WORK/out"; then ok; else bad "JSON not_checked: $(tail -c 300 "$WORK/out")"; fi
expect_status 0 "$I" -q --format json rules.csv
if grep -q '"not_checked":\[\]' "$WORK/out"; then ok; else bad "JSON not_checked empty"; fi
expect_status 0 "$I" -q "$SRC/testdata/memscope_dump_20250428113810.csv"

# usage errors (2), invalid input (3), I/O (4); never an output left behind
expect_status 2 "$I" --idle-threshold 0 rules.csv
expect_err_line '^memscope-inefficient: --idle-threshold: expected a whole number from 1'
expect_status 2 "$I" --idle-threshold 12abc rules.csv
expect_status 2 "$I" --min-size 1X rules.csv
expect_err_line "^memscope-inefficient: --min-size: expected bytes"
expect_status 2 "$I" --kinds early rules.csv
expect_err_line "^memscope-inefficient: --kinds: expected early_allocation, late_deallocation and/or temporary_idleness, or all, got 'early'$"
expect_status 2 "$I" --types early_allocation, rules.csv
expect_err_line "^memscope-inefficient: --kinds: expected .*, got 'early_allocation,'$"
expect_status 2 "$I" --format xml rules.csv
expect_err_line "^memscope-inefficient: --format: expected text, json or csv, got 'xml'$"
expect_status 2 "$I"
expect_status 2 "$I" --annotate "$WORK/a.csv" rules.csv processes.csv
expect_err_line 'exactly one INPUT'
expect_status 2 sh -c "\"$I\" --annotate \"$WORK/a.csv\" - <rules.csv"
expect_err_line 'standard input cannot be read twice'
expect_absent "$WORK/a.csv"
cp rules.csv "$WORK/in.csv"
expect_status 2 "$I" --annotate "$WORK/in.csv" "$WORK/in.csv"
expect_err_line 'would overwrite the input'
expect_same "$WORK/in.csv" rules.csv
expect_status 2 "$I" -o "$WORK/in.csv" "$WORK/in.csv"
expect_status 2 "$I" -o "$WORK/r.txt" rules.csv
expect_err_line 'exists'
expect_status 2 "$I" -o "$WORK/same" --annotate "$WORK/same" rules.csv
expect_status 4 "$I" "$WORK/missing.csv"
expect_err_line 'missing.csv'
printf 'ID,Event,Event Type\n1,MALLOC,PTA\n' >"$WORK/hdr.csv"
expect_status 3 "$I" "$WORK/hdr.csv"
expect_err_line 'hdr.csv:1:'
sed '8s/^[0-9]*,/2x,/' rules.csv >"$WORK/badrow.csv"
expect_status 3 "$I" -o "$WORK/bad.txt" --annotate "$WORK/bad_ann.csv" "$WORK/badrow.csv"
expect_err_line 'badrow.csv:8:'
expect_absent "$WORK/bad.txt"
expect_absent "$WORK/bad_ann.csv"
head -c 3000 rules.csv >"$WORK/cut.csv"
printf '9,MALLOC,PTA,N/A,1,100,100,0,0x1,"{allocation_id:9,' >>"$WORK/cut.csv"
expect_status 3 "$I" "$WORK/cut.csv"
expect_err_line 'cut.csv:[0-9]+: .*quoted field'
# -o's ending gives the format when --format is not given; a contradiction is refused
expect_status 0 "$I" -q -f -o "$WORK/by_name.csv" rules.csv
head -1 "$WORK/by_name.csv" | grep -q '^rank,input,' && ok || bad "-o x.csv: not CSV: $(head -1 "$WORK/by_name.csv")"
expect_status 2 "$I" -q -f --format text -o "$WORK/by_name.json" rules.csv
expect_err_line '^memscope-inefficient: --format text contradicts -o .*/by_name.json \(json\)$'
finish
