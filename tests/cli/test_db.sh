#!/bin/sh
# Golden CLI cases of memscope-db: the reference's schema, JSON Attrs, round trips, blocks, python_trace
# tables, reference databases read back, safe outputs and bad input. Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
D="$BIN/memscope-db"
TOOL=$D
cd "$WORK" || exit 1
cp "$SRC"/testdata/baseline.csv "$SRC"/testdata/leaks.csv "$SRC"/testdata/memscope_dump_2025042811381?.csv \
	"$SRC"/testdata/db/*.csv "$SRC"/testdata/db/*.sql .
# q DB SQL: one query's result on stdout (python3's sqlite3: no sqlite3 binary needed)
q() {
	python3 -c 'import sys, sqlite3
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join("" if v is None else str(v) for v in r))' "$@"
}
# expect_q DB SQL WANT: the query's output is WANT
expect_q() {
	got=$(q "$1" "$2")
	if [ "$got" = "$3" ]; then ok; else bad "$2 on $1: got '$got', wanted '$3'"; fi
}

# the shared samples: CSV -> db -> CSV byte-identical (current layout)
for f in baseline leaks hostile; do
	expect_status 0 "$D" -q "$f.csv"
	expect_status 0 "$D" -q --to-csv -o "$f.back.csv" "$f.db"
	expect_same "$f.csv" "$f.back.csv"
done
# a compressed dump: the default name drops .gz/.zst with the extension (run.csv.zst -> run.db)
gzip -c baseline.csv >zbase.csv.gz
zstd -q -c leaks.csv >zleaks.csv.zst
expect_status 0 "$D" -q zbase.csv.gz
expect_status 0 "$D" -q zleaks.csv.zst
expect_q zbase.db 'select count(*) from memscope_dump' "$(q baseline.db 'select count(*) from memscope_dump')"
expect_q zleaks.db 'select count(*) from memscope_dump' "$(q leaks.db 'select count(*) from memscope_dump')"
# legacy files come back as memscope-convert normalises them (ns, hex Ptr, cpu)
for f in memscope_dump_20250428113810 memscope_dump_20250428113811; do
	expect_status 0 "$D" -q "$f.csv"
	expect_status 0 "$D" -q --to-csv -o "$f.back.csv" "$f.db"
	expect_status 0 "$BIN/memscope-convert" -q -t csv -o "$f.norm.csv" "$f.csv"
	expect_same "$f.norm.csv" "$f.back.csv"
done
cp memscope_dump_20250428113810.db legacy.db

# the reference's DDL, exactly (formats/sqlite.md "The reference's tables"), and no other
# memscope_dump column
expect_q baseline.db "SELECT sql FROM sqlite_master WHERE name = 'memscope_dump'" \
	'CREATE TABLE memscope_dump ("ID" INTEGER, "Event" TEXT, "Event Type" TEXT, "Name" TEXT, "Timestamp(ns)" INTEGER, "Process Id" INTEGER, "Thread Id" INTEGER, "Device Id" TEXT, "Ptr" TEXT, "Attr" TEXT, "Call Stack(Python)" TEXT, "Call Stack(C)" TEXT)'
expect_q hostile.db "SELECT sql FROM sqlite_master WHERE name = 'memscope_dump'" "$(q baseline.db "SELECT sql FROM sqlite_master WHERE name = 'memscope_dump'")"
# every Attr is JSON, also values holding : " \ and a tab; keys in source order, values strings
for f in baseline leaks hostile legacy; do
	expect_q $f.db "SELECT count(*) - sum(json_valid(\"Attr\")) FROM memscope_dump" 0
done
expect_q baseline.db "SELECT \"Attr\" FROM memscope_dump WHERE \"Event\" = 'MALLOC' ORDER BY rowid LIMIT 1" \
	'{"allocation_id":"4","addr":"0x000012c041400000","size":"16778240","total":"20971520","used":"16780288"}'
expect_q hostile.db "SELECT json_extract(\"Attr\", '\$.note') = 'a:b c\\d \"q\" ' || char(9) || 'tab' FROM memscope_dump WHERE \"ID\" = 5" 1
expect_q hostile.db "SELECT \"Attr\" FROM memscope_dump WHERE \"ID\" IN (14, 15, 16, 2) ORDER BY \"ID\"" '{}
"not k:v text"
"{}"
""'
# the reference's spelling: MSTX names and stacks keep their quotes, N/A ids are NULL
expect_q hostile.db "SELECT \"Name\", typeof(\"Process Id\") FROM memscope_dump WHERE \"ID\" IN (2, 18) ORDER BY \"ID\"" '"step start"|integer
k\tname|null'
expect_q hostile.db "SELECT \"Call Stack(Python)\" FROM memscope_dump WHERE \"ID\" = 3" '"a.py(1): f
b.py(2): g"'
# MindStudio Insight's query (formats/sqlite.md "What MindStudio Insight reads") runs, uses the
# time index and skips the device-less rows
n_dev=$(python3 -c 'import csv, sys
print(sum(1 for r in csv.DictReader(open(sys.argv[1])) if r["Device Id"] not in ("N/A", "", "host")))' baseline.csv)
expect_q baseline.db "SELECT count(*) FROM (SELECT * FROM memscope_dump WHERE \"Device Id\" NOT IN ('N/A','','host') ORDER BY \"Timestamp(ns)\")" "$n_dev"
expect_q baseline.db "SELECT min(\"Timestamp(ns)\") FROM (SELECT * FROM memscope_dump WHERE \"Device Id\" NOT IN ('N/A','','host') ORDER BY \"Timestamp(ns)\" LIMIT 1)" \
	"$(q baseline.db "SELECT min(\"Timestamp(ns)\") FROM memscope_dump WHERE \"Device Id\" != 'N/A'")"
expect_status 0 python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
plan = " ".join(str(r) for r in c.execute("EXPLAIN QUERY PLAN SELECT * FROM memscope_dump WHERE \"Device Id\" NOT IN (\"N/A\",\"\",\"host\") ORDER BY \"Timestamp(ns)\""))
sys.exit(0 if "memscope_dump_time" in plan else 1)' baseline.db
expect_q baseline.db "SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name" 'memscope_blocks_process_time
memscope_dump_event
memscope_dump_process_time
memscope_dump_time'

# blocks (testdata/README.txt derives them): freed; shadow-freed before a later real row (not
# alive at exit); shadow-freed after the last real row and never freed (alive at exit)
expect_q hostile.db "SELECT allocation_id, pool, size, owner, end_by, leaked_at_exit, n_access, first_access_ts, last_access_ts, malloc_row, free_row, lifetime_ns, malloc_id, free_id FROM memscope_blocks ORDER BY allocation_id" \
'1|PTA|512|PTA@model@weight|free|0|2|1300|1400|3|6|300|3|6
2|PTA|256||shadow_free|0|0|||7|8|100|7|8
3|HAL|4096||none|1|0|||10|||10|
4|PTA|128||shadow_free|1|0|||16|18|100|11|12'
expect_q hostile.db "SELECT block_id, call_stack_python, call_stack_c FROM memscope_block_stacks WHERE allocation_id = 1" '1|"a.py(1): f
b.py(2): g"|"libx.so(+0x1) [0x7f]"'
expect_q baseline.db "SELECT count(*), sum(leaked_at_exit), sum(end_by = 'free') FROM memscope_blocks" '23|7|16'
# the exit leaks agree with memscope-leaks --exit on the same file
expect_status 0 "$BIN/memscope-leaks" -q --kind exit --format csv baseline.csv
n_exit=$(($(wc -l <"$WORK/out") - 1))
expect_q baseline.db "SELECT sum(leaked_at_exit) FROM memscope_blocks" "$n_exit"

# memscope_blocks.op: a profiler output's block names the op its MALLOC row names (that row's
# Name, read through malloc_row), NULL for msMemScope's (their MALLOCs name none); the layout is
# user_version 2 (formats/sqlite.md)
P="$SRC/testdata/msprof/torch_npu_level0_rank0_ascend_pt"
expect_status 0 "$D" -q -o prof.db "$P"
expect_q prof.db "PRAGMA user_version" 2
expect_q baseline.db "PRAGMA user_version" 2
expect_q prof.db "SELECT count(*) > 0, count(*) = count(op), sum(b.op IS NOT m.\"Name\") FROM memscope_blocks AS b JOIN memscope_dump AS m ON m.rowid = b.malloc_row" '1|1|0'
expect_q prof.db "SELECT count(*) FROM memscope_dump WHERE \"Event\" = 'MALLOC'" "$(q prof.db 'SELECT count(*) FROM memscope_blocks')"
expect_q baseline.db "SELECT count(*), count(op) FROM memscope_blocks" '23|0'
expect_q prof.db "SELECT name FROM pragma_table_info('memscope_blocks') ORDER BY cid DESC LIMIT 1" op
expect_q prof.db "SELECT count(*) FROM pragma_table_info('memscope_block_stacks') WHERE name = 'op'" 1
# the typed size column sorts as numbers; the Attr's JSON values are strings, so ordering by
# them sorts as text (what formats/sqlite.md "Examples" says: keep it true on this sample)
expect_q prof.db "SELECT typeof(size), typeof(json_extract(m.\"Attr\", '\$.size')) FROM memscope_blocks AS b JOIN memscope_dump AS m ON m.rowid = b.malloc_row LIMIT 1" 'integer|text'
expect_q prof.db "SELECT max(size) FROM memscope_blocks" "$(q prof.db "SELECT json_extract(\"Attr\", '\$.size') FROM memscope_dump WHERE \"Event\" = 'MALLOC' ORDER BY CAST(json_extract(\"Attr\", '\$.size') AS INTEGER) DESC LIMIT 1")"
[ "$(q prof.db "SELECT json_extract(\"Attr\", '\$.size') FROM memscope_dump WHERE \"Event\" = 'MALLOC' ORDER BY json_extract(\"Attr\", '\$.size') DESC LIMIT 1")" != \
	"$(q prof.db 'SELECT max(size) FROM memscope_blocks')" ] && ok || bad "json_extract sizes sorted as numbers: formats/sqlite.md's example is wrong"
# formats/sqlite.md's examples run on it, each giving rows
awk '/^## Examples/ { on = 1; next } /^## / { on = 0 } on && /^```sql/ { sql = ""; inq = 1; next }
	on && inq && /^```/ { print sql; inq = 0; next } on && inq { sql = sql " " $0 }' \
	"$SRC/formats/sqlite.md" >examples.sql
[ "$(wc -l <examples.sql)" -ge 3 ] && ok || bad "formats/sqlite.md: no examples found"
while IFS= read -r sql; do
	[ -n "$(q prof.db "$sql" 2>&1)" ] && q prof.db "$sql" >/dev/null 2>&1 && ok || bad "formats/sqlite.md example: $sql"
done <examples.sql

# several inputs into one database; python_trace files into python_trace_{pid} tables
expect_status 0 "$D" -o multi.db baseline.csv python_trace.csv leaks.csv
expect_err_line '^memscope-db: multi.db: 251 rows \(inputs: 3\), 48 blocks \(unreleased at exit: 17, unmatched frees: 0\), 6 python_trace rows \(tables: 2\)$'
expect_q multi.db "SELECT source, path, format, layout, first_row, last_row, n_rows, n_trace_rows FROM memscope_sources" \
'0|baseline.csv|dump-csv|current|1|121|121|0
1|python_trace.csv|python-trace||||0|6
2|leaks.csv|dump-csv|current|122|251|130|0'
expect_q multi.db "SELECT sql FROM sqlite_master WHERE name = 'python_trace_7'" \
	'CREATE TABLE python_trace_7 ("FuncInfo" TEXT, "StartTime(ns)" TEXT, "EndTime(ns)" TEXT, "Thread Id" INTEGER, "Process Id" INTEGER)'
expect_q multi.db "SELECT * FROM python_trace_7 WHERE \"Thread Id\" = 8" '/w/data,loader.py(5): next|N/A|1150|8|7'
expect_q multi.db "SELECT count(*) FROM python_trace_9" 1
expect_status 0 "$D" -q --to-csv -o - multi.db
{ cat baseline.csv; tail -n +2 leaks.csv; } >multi.expected.csv
expect_same "$WORK/out" multi.expected.csv
# --format csv is the output's format, as in every tool; --to-csv, its older spelling, does the
# same byte for byte; --format db is the default
expect_alias 0 --format=csv --to-csv -o - multi.db
expect_same "$WORK/out" multi.expected.csv
expect_status 0 "$D" -q --format db -o fmt.db baseline.csv leaks.csv
expect_status 0 "$D" -q -o nofmt.db baseline.csv leaks.csv
expect_same fmt.db nofmt.db

# a capture file goes in as memscope-convert reads it; other tools read databases too
expect_status 0 "$BIN/memscope-convert" -q -o b.mscap baseline.csv
expect_status 0 "$D" -q -o cap.db b.mscap
expect_status 0 "$D" -q --to-csv -o cap.csv cap.db
expect_status 0 "$BIN/memscope-convert" -q -o cap.expected.csv b.mscap
expect_same cap.csv cap.expected.csv
# (positions in a database are rowids: the CSV's line 115 is row 114, the header being line 1)
expect_status 0 "$BIN/memscope-leaks" -q baseline.csv
python3 -c 'import re, sys
sys.stdout.write(re.sub(r"baseline\.csv(:(\d+))?", lambda m: "baseline.db" + (":%d" % (int(m.group(2)) - 1) if m.group(2) else ""), sys.stdin.read()))' <"$WORK/out" >leaks.from.csv
expect_status 0 "$BIN/memscope-leaks" -q baseline.db
expect_same "$WORK/out" leaks.from.csv

# a database the reference wrote: FixJson attrs (one of them not JSON), -1 for N/A, leaks_dump
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read()); c.commit()' ref.db reference_db.sql
expect_status 0 "$D" -q --to-csv -o ref.csv ref.db
expect_same ref.csv reference_db_expected.csv
# an Attr that is neither JSON nor FixJson text is a bad row (its rowid named), skipped with --lenient
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.executescript(open(sys.argv[2]).read())
c.execute("UPDATE leaks_dump SET Attr = ? WHERE ID = 2", ("free:1",)); c.commit()' garbled.db reference_db.sql
expect_status 3 "$D" --to-csv -o garbled.csv garbled.db
expect_err_line '^memscope-db: garbled.db:3: Attr is not JSON: "free:1"$'
expect_absent garbled.csv
expect_status 0 "$D" -q --lenient --to-csv -o garbled.csv garbled.db
grep -v '^2,SYSTEM' reference_db_expected.csv >garbled.expected.csv
expect_same garbled.csv garbled.expected.csv
# the reference leaves its databases in WAL mode: reading one creates no -wal/-shm files beside it
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA journal_mode=WAL"); c.executescript(open(sys.argv[2]).read()); c.commit(); c.close()' wal.db reference_db.sql
expect_status 0 "$D" -q --to-csv -o wal.csv wal.db
expect_same wal.csv reference_db_expected.csv
if [ ! -e wal.db-wal ] && [ ! -e wal.db-shm ]; then ok; else bad "reading wal.db left side files"; fi
expect_status 0 "$D" -q -o ref.fixed.db ref.db
expect_q ref.fixed.db "SELECT count(*) - sum(json_valid(\"Attr\")) FROM memscope_dump" 0
expect_q ref.fixed.db "SELECT json_extract(\"Attr\", '\$.shape') FROM memscope_dump WHERE \"ID\" = 3" 'torch.Size([2, 3])'

# outputs: refused when present, replaced with --force, never stdout, never an input
expect_status 2 "$D" baseline.csv
expect_err_line '^memscope-db: baseline.db: exists \(use --force to overwrite\)$'
expect_status 0 "$D" -q -f baseline.csv
expect_status 2 "$D" -o - baseline.csv
expect_err_line 'cannot be written to standard output'
expect_status 2 "$D" -f -o leaks.csv baseline.csv leaks.csv
expect_err_line '^memscope-db: leaks.csv: output would overwrite the input$'
expect_status 2 "$D" baseline.csv leaks.csv
expect_err_line 'name the database with -o'
expect_status 2 "$D" --to-csv a.db b.db
expect_err_line '^memscope-db: --format csv takes one database, got 2 inputs$'
expect_status 2 "$D" --format sqlite baseline.csv
expect_err_line "^memscope-db: --format: expected db or csv, got 'sqlite'$"
expect_status 2 "$D" -o /dev/null baseline.csv
expect_err_line 'not a regular file'
expect_status 3 "$D" --to-csv -o x.csv baseline.csv
expect_err_line '^memscope-db: baseline.csv: not a database'
expect_absent x.csv
expect_status 0 sh -c "cat baseline.csv | '$D' -q -o piped.db -"
expect_q piped.db "SELECT count(*) FROM memscope_dump" 121

# a database given as an input brings its python_trace tables (a source of their own after its
# inputs, as they are per process); file: names are files, not URIs
expect_status 0 "$D" -q -o merged.db multi.db hostile.csv
expect_q merged.db "SELECT count(*) FROM python_trace_7" 5
expect_q merged.db "SELECT source, path, format, layout, first_row, last_row, n_rows, n_trace_rows FROM memscope_sources" \
'0|multi.db:baseline.csv|db|current|1|121|121|0
1|multi.db:leaks.csv|db|current|122|251|130|0
2|multi.db|db||||0|6
3|hostile.csv|dump-csv|current|252|270|19|0'
mkdir uri && cp baseline.csv uri/file:b.csv && cp leaks.csv uri/b.csv
expect_status 0 sh -c "cd uri && '$D' -q -o file:b.db file:b.csv && '$D' -q --to-csv -o - file:b.db"
expect_same "$WORK/out" baseline.csv
if [ -s uri/file:b.db ] && [ -z "$(ls uri | grep tmp)" ] && [ ! -e uri/b.db ]; then ok; else bad "file: paths: $(ls uri)"; fi
# a table without a column the reader needs is refused by name (SQLite would read "Name" as text)
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE memscope_dump (\"ID\" INTEGER, \"Event\" TEXT, \"Event Type\" TEXT, \"Timestamp(ns)\" INTEGER, \"Process Id\" INTEGER, \"Thread Id\" INTEGER, \"Device Id\" TEXT, \"Ptr\" TEXT, \"Attr\" TEXT, \"Call Stack(Python)\" TEXT, \"Call Stack(C)\" TEXT)"); c.commit()' noname.db
expect_status 3 "$D" --to-csv -o noname.csv noname.db
expect_err_line '^memscope-db: noname.db: table memscope_dump has no column "Name"$'
expect_absent noname.csv
# an interrupted run leaves nothing, not even its temporary file
{ cat baseline.csv; sleep 5; } | "$D" -q -o int.db - 2>/dev/null &
sleep 1
kill -TERM $! 2>/dev/null
wait $! 2>/dev/null
if [ -z "$(ls | grep '^int\.db')" ]; then ok; else bad "interrupted run left $(ls | grep '^int')"; fi
# write failures name the output
if [ -w /dev/full ]; then
	expect_status 4 sh -c "'$D' -q --to-csv -o - baseline.db >/dev/full"
	expect_err_line '^memscope-db: -: write failed'
fi

# bad input: one line naming file and line, exit 3, nothing left at the output path
sed '9s/,1764753084427185510,/,17647530844x,/' baseline.csv >bad.csv
expect_status 3 "$D" -o bad.db bad.csv
expect_err_line '^memscope-db: bad.csv:9: invalid Timestamp "17647530844x"$'
expect_absent bad.db
expect_status 3 "$D" -o bad.db leaks.csv bad.csv
expect_absent bad.db
expect_status 0 "$D" -q --lenient -o lenient.db bad.csv
expect_q lenient.db "SELECT count(*) FROM memscope_dump" 120
printf 'FuncInfo,StartTime(ns),EndTime(ns),Thread Id,Process Id\nf,1,2,3,4\ng,1,x,3,4\n' >badtrace.csv
expect_status 3 "$D" -o bad.db badtrace.csv
expect_err_line '^memscope-db: badtrace.csv:3: invalid EndTime "x"$'
expect_absent bad.db
printf 'FuncInfo,Start\n' >badhead.csv
expect_status 3 "$D" -o bad.db badhead.csv
expect_err_line '^memscope-db: badhead.csv:1: not a python_trace CSV'
printf '1,MALLOC,PTA,N/A,1,1,1,0,0x1,"{a:x\001y}",,\n' | cat baseline.csv - | tr '\001' '\000' >nul.csv
expect_status 3 "$D" -o bad.db nul.csv
expect_err_line '^memscope-db: nul.csv:123: NUL byte at column 35, in field 10 '
expect_absent bad.db
head -c 3000 baseline.db >cut.db
expect_status 3 "$D" --to-csv -o cut.csv cut.db
expect_absent cut.csv
expect_status 4 "$D" -o x.db missing.csv
expect_absent x.db

# a database of several inputs is read as them (formats/sqlite.md "Reading a database"): ranks
# whose processes share a pid (4242, devices 0-3), with steps and leaks differing per rank
python3 - <<'PY'
import os
H = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n"
for r in range(4):
    rows, st = [], {"i": 0, "t": 1000000, "aid": 0}
    def row(ev, ty, name, ptr="N/A", attr="", dev=str(r)):
        st["i"] += 1
        st["t"] += 1000 + 7 * r
        rows.append('%d,%s,%s,%s,%d,4242,4242,%s,%s,%s,"f%d.py(%d): step",\n'
                    % (st["i"], ev, ty, name, st["t"], dev, ptr, attr, r, st["i"] % 5))
    def alloc(pool, size):
        st["aid"] += 1
        p = "0x%016x" % (0x120000000000 + r * 0x1000000000 + st["aid"] * 0x10000)
        row("MALLOC", pool, "N/A", p, '"{allocation_id:%d,addr:%s,size:%d}"' % (st["aid"], p, size))
        return st["aid"], p, size
    def free(b):
        row("FREE", "PTA", "N/A", b[1], '"{allocation_id:%d,addr:%s,size:%d}"' % b)
    row("SYSTEM", "START_TRACE", "N/A", dev="N/A")
    alloc("HAL", (r + 1) << 30)
    prev = None
    for s in range(1, 6 + 2 * r):  # rank r: 5 + 2r steps; every (r+2)-th step leaks a block
        row("MSTX", "Range_start", '"step start"')
        a = alloc("PTA", 512 * (r + 1))
        b = alloc("PTA", 4096 + s)
        if prev:
            free(prev)
        for k in range(r + 2):
            row("OP_LAUNCH", "ATEN_START", "aten.mul")
            row("OP_LAUNCH", "ATEN_END", "aten.mul")
        row("ACCESS", "READ", "aten.add", a[1], '"{allocation_id:%d,addr:%s,size:%d,type:PTA}"' % a)
        free(a)
        prev = b if s % (r + 2) else None
        row("MSTX", "Range_end", '"step start"')
    row("SYSTEM", "STOP_TRACE", "N/A", dev="N/A")
    os.makedirs("rank%d" % r, exist_ok=True)
    open("rank%d/x.csv" % r, "w").write(H + "".join(rows))
PY
RANKS="rank0/x.csv rank1/x.csv rank2/x.csv rank3/x.csv"
expect_status 0 "$D" -q -o all.db $RANKS
# norm KIND DB OUT: OUT (a tool's output on DB) as the same tool writes it for the CSVs: input
# "DB:rankK/x.csv" is "rankK/x.csv", a position (a rowid of DB) the CSV's line
cat >norm.py <<'PY'
import json, re, sqlite3, sys
kind, db, path = sys.argv[1:4]
first = {} if db == "-" else dict(sqlite3.connect(db).execute("SELECT path, first_row FROM memscope_sources"))
line = lambda name, n: n - first[name] + 2
text = open(path).read()
if kind == "text":  # "DB:name:row", and "line row" after a line naming the input
    name = None
    for t in text.splitlines(True):
        m = re.search(re.escape(db) + r":(rank\d/x\.csv)", t)
        name = m.group(1) if m else name
        t = re.sub(re.escape(db) + r":(rank\d/x\.csv):(\d+)", lambda m: "%s:%d" % (m.group(1), line(m.group(1), int(m.group(2)))), t)
        t = re.sub(r"\bline (\d+)", lambda m: "line %d" % line(name, int(m.group(1))), t)
        sys.stdout.write(t.replace(db + ":", ""))
    sys.exit(0)
def walk(v, name):
    if isinstance(v, str):
        return v.replace(db + ":", "") if db != "-" else v
    if isinstance(v, dict):
        if isinstance(v.get("input"), str) and v["input"].startswith(db + ":"):
            v["input"] = name = v["input"][len(db) + 1:]
        for k in v:
            if k == "line" and isinstance(v[k], int) and name:
                v[k] = line(name, v[k])
            else:
                v[k] = walk(v[k], name)
    elif isinstance(v, list):
        v[:] = [walk(x, name) for x in v]
    return v
j = walk(json.loads(text), None)
json.dump(j, sys.stdout, sort_keys=True)
PY
cmp_csvs() { # cmp_csvs KIND WHAT TOOL ARGS...: TOOL ARGS on all.db, normalised, is TOOL ARGS on the CSVs
	kind=$1 what=$2
	shift 2
	expect_status 0 "$@" $RANKS
	if [ "$kind" = json ]; then python3 norm.py json - "$WORK/out" >"$what.csv.out"; else cp "$WORK/out" "$what.csv.out"; fi
	cp "$WORK/err" "$what.csv.err"
	expect_status 0 "$@" all.db
	python3 norm.py "$kind" all.db "$WORK/out" >"$what.db.out"
	expect_same "$what.db.out" "$what.csv.out"
}
cmp_csvs text leaks "$BIN/memscope-leaks" -q
cmp_csvs json leaksj "$BIN/memscope-leaks" -q --format json
cmp_csvs text ineff "$BIN/memscope-inefficient" -q --idle-threshold 1
cmp_csvs json ineffj "$BIN/memscope-inefficient" -q --idle-threshold 1 --format json
cmp_csvs json trace "$BIN/memscope-export" -q --format chrome-trace -o -
# what each rank holds shows through: 4 sections, steps up to rank 3's 11, HAL 1+2+3+4 GiB in 4
# blocks, nothing merged (no "reading again", no MALLOC on a live address)
expect_status 0 "$BIN/memscope-leaks" all.db
if [ "$(grep -c '^==> all\.db:rank[0-3]/x\.csv <==$' "$WORK/out")" = 4 ] &&
	grep -q 'HAL 10.0 GiB in 4 blocks' "$WORK/err" && ! grep -q 'again\|still live' "$WORK/err"; then ok; else bad "leaks of all.db: $(cat "$WORK/err")"; fi
expect_status 0 python3 -c 'import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
names = sorted((e["pid"], e["args"]["name"]) for e in ev if e.get("name") == "process_name")
sys.exit(0 if [p for p, _ in names] == [1, 2, 3, 4] else 1)' trace.db.out
# the [i/n] and per-input lines name the inputs; an output over the database is still refused
expect_status 2 "$BIN/memscope-leaks" -f -o all.db all.db
expect_err_line '^memscope-leaks: all.db: output would overwrite the input all.db:rank0/x.csv \(the same file\)$'
# tools of one input per side or file: compare refuses it, saying how many it holds;
# memscope-convert and memscope-db --format csv write the whole table, as for any database
expect_status 2 "$BIN/memscope-compare" --input all.db,rank0/x.csv -o cmp.csv
expect_err_line '^memscope-compare: all.db: a database of 4 inputs, read here as one input'
expect_absent cmp.csv
expect_status 0 "$D" -q --to-csv -o all.csv all.db
expect_status 0 "$BIN/memscope-convert" -q -t csv -o all.conv.csv all.db
expect_same all.csv all.conv.csv
if [ "$(($(wc -l <all.csv) + 3))" = "$(cat $RANKS | wc -l)" ]; then ok; else bad "all.csv: $(wc -l <all.csv) lines"; fi
# a database of one input (and one with a python_trace input beside it) keeps its plain name
expect_status 0 "$D" -q -o one.db rank2/x.csv python_trace.csv
expect_status 0 "$BIN/memscope-leaks" -q --format json one.db
if grep -q '"input":"one.db"' "$WORK/out" && ! grep -q 'one.db:' "$WORK/out"; then ok; else bad "one.db named $(grep -o '"input":"[^"]*"' "$WORK/out" | sort -u)"; fi
# a hostile memscope_sources: a clear error (exit 3, the database named), never a wrong answer
hostile_src() { # hostile_src NAME SQL
	cp all.db "$1" && python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()' "$1" "$2"
}
hostile_src overlap.db "UPDATE memscope_sources SET first_row = first_row - 5, n_rows = n_rows + 5 WHERE source = 2"
expect_status 3 "$BIN/memscope-leaks" -q overlap.db
expect_err_line '^memscope-leaks: overlap.db: memscope_sources: source 2 starts at row [0-9]+, not at the row after the input before$'
hostile_src beyond.db "UPDATE memscope_sources SET last_row = last_row + 9, n_rows = n_rows + 9 WHERE source = 3"
expect_status 3 "$BIN/memscope-export" -q --format chrome-trace -o beyond.json beyond.db
expect_err_line '^memscope-export: beyond.db: memscope_sources: its inputs end at row [0-9]+, memscope_dump at row [0-9]+$'
expect_absent beyond.json
hostile_src short.db "UPDATE memscope_sources SET last_row = last_row - 3, n_rows = n_rows - 3 WHERE source = 3"
expect_status 3 "$BIN/memscope-leaks" -q short.db
expect_err_line '^memscope-leaks: short.db: memscope_sources: its inputs end at row'
hostile_src notint.db "UPDATE memscope_sources SET n_rows = 'many' WHERE source = 1"
expect_status 3 "$BIN/memscope-inefficient" -q notint.db
expect_err_line '^memscope-inefficient: notint.db: memscope_sources: source 1: its rows \(first_row, last_row, n_rows\) are not a rowid range$'
hostile_src missing.db "DELETE FROM memscope_dump WHERE rowid = 60"
expect_status 3 "$BIN/memscope-leaks" -q missing.db
expect_err_line '^memscope-leaks: missing.db: memscope_sources: input 2 has [0-9]+ rows \(rowids [0-9]+ to [0-9]+\), the table [0-9]+$'
hostile_src nocol.db "ALTER TABLE memscope_sources DROP COLUMN n_rows"
expect_status 3 "$BIN/memscope-leaks" -q nocol.db
expect_err_line '^memscope-leaks: nocol.db: cannot read memscope_sources: no such column: n_rows$'
# a recorded name with control bytes is escaped, in reports and messages alike
hostile_src ctl.db "UPDATE memscope_sources SET path = 'r0' || char(10) || char(27) || '[31mx' WHERE source = 0"
expect_status 0 "$BIN/memscope-leaks" -q ctl.db
if [ "$(grep -c '^==> ' "$WORK/out")" = 4 ] && ! tr -d '\n' <"$WORK/out" | grep -q "$(printf '\033')"; then ok; else bad "ctl.db: control bytes in the report"; fi

# a database of several inputs given to memscope-db is those inputs again: one source each, named
# DB:PATH, with the rows and row ranges recorded, so the ranks are never merged
expect_status 0 "$D" -q -o three.db rank0/x.csv rank1/x.csv rank3/x.csv
expect_status 0 "$D" -o again.db three.db
expect_err_line '^memscope-db: again.db: 333 rows \(inputs: 3\), '
expect_status 0 "$D" -q -o plus.db three.db rank2/x.csv
RANGES="SELECT source, format, first_row, last_row, n_rows, n_trace_rows FROM memscope_sources"
expect_q again.db "$RANGES" "$(q three.db "$RANGES" | sed 's/|dump-csv|/|db|/')"
expect_q again.db "SELECT path FROM memscope_sources" 'three.db:rank0/x.csv
three.db:rank1/x.csv
three.db:rank3/x.csv'
expect_q plus.db "$RANGES" "$(q again.db "$RANGES")
3|dump-csv|334|468|135|0"
expect_q plus.db "SELECT path FROM memscope_sources WHERE source >= 2" 'three.db:rank3/x.csv
rank2/x.csv'
for t in memscope_dump memscope_blocks; do
	expect_q again.db "SELECT * FROM $t ORDER BY rowid" "$(q three.db "SELECT * FROM $t ORDER BY rowid")"
done
expect_q plus.db "SELECT * FROM memscope_dump WHERE rowid <= 333 ORDER BY rowid" "$(q three.db "SELECT * FROM memscope_dump ORDER BY rowid")"
expect_q plus.db "SELECT * FROM memscope_dump WHERE rowid > 333 ORDER BY rowid" "$(q one.db "SELECT * FROM memscope_dump ORDER BY rowid")"
# memscope-leaks finds per input what it finds in the CSVs (input DB:[X.db:]rankK/x.csv is
# rankK/x.csv, a rowid of DB the CSV's line)
cat >renorm.py <<'PY'
import json, re, sqlite3, sys
db, path = sys.argv[1:3]
first = dict(sqlite3.connect(db).execute("SELECT path, first_row FROM memscope_sources"))
def walk(v, p):
    if isinstance(v, dict):
        if isinstance(v.get("input"), str) and v["input"].startswith(db + ":"):
            p = v["input"][len(db) + 1:]
            v["input"] = re.sub(r"^[^:]*\.db:", "", p)
        for k in v:
            v[k] = v[k] - first[p] + 2 if k == "line" and p else walk(v[k], p)
    elif isinstance(v, list):
        v[:] = [walk(x, p) for x in v]
    return v
json.dump(walk(json.load(open(path)), None), sys.stdout, sort_keys=True)
PY
for c in "again.db rank0/x.csv rank1/x.csv rank3/x.csv" "plus.db rank0/x.csv rank1/x.csv rank3/x.csv rank2/x.csv"; do
	set -- $c
	db=$1
	shift
	expect_status 0 "$BIN/memscope-leaks" -q --format json "$@"
	python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1])), sys.stdout, sort_keys=True)' "$WORK/out" >"$db.csv.json"
	expect_status 0 "$BIN/memscope-leaks" -q --format json "$db"
	python3 renorm.py "$db" "$WORK/out" >"$db.db.json"
	expect_same "$db.db.json" "$db.csv.json"
	if grep -q '"input": "rank0/x.csv"' "$db.db.json"; then ok; else bad "$db: no leak of rank0 found"; fi
done
# python_trace tables come along as a source without dump rows, not read as an input
expect_status 0 "$BIN/memscope-leaks" merged.db
if [ "$(grep -c '^==> merged\.db:' "$WORK/out")" = 3 ] && ! grep -q '^==> merged\.db:multi\.db <==$' "$WORK/out"; then ok; else bad "merged.db inputs: $(grep '^==> ' "$WORK/out")"; fi
# a database whose memscope_sources does not say which rows are whose is refused as an input too
expect_status 3 "$D" -q -o re.db overlap.db
expect_err_line '^memscope-db: overlap.db: memscope_sources: source 2 starts at row [0-9]+, not at the row after the input before$'
expect_absent re.db
# --annotate copies one dump CSV: a database of several inputs given as one argument is told so
expect_status 3 "$BIN/memscope-inefficient" -q --annotate ann.csv all.db
expect_err_line '^memscope-inefficient: all.db: --annotate needs a dump CSV and this is a database of 4 inputs \(give the dump CSV of one of them\)$'
expect_absent ann.csv
expect_status 2 "$BIN/memscope-inefficient" -q --annotate ann.csv rank0/x.csv all.db
expect_err_line '^memscope-inefficient: --annotate takes exactly one INPUT, got 2$'
finish
