#!/bin/sh
# Nsight Systems exports (formats/nsys.md) through the tools: databases built by make_nsys.py with
# both enum numberings and both column sets, converted and compared event by event with what the
# script inserted; bad rows strict and lenient; a step leak; the folded export; the batch walk.
# Args: BIN_DIR SRC_DIR
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
. "$SRC/tests/cli/lib.sh"
C="$BIN/memscope-convert"
G="$SRC/tests/gpu"
D="$WORK/db"
cd "$WORK" || exit 1
if ! python3 "$G/make_nsys.py" "$D" >"$WORK/make.out" 2>&1; then
	bad "make_nsys.py: $(cat "$WORK/make.out")"
	finish
	exit 1
fi

# check CSV NAME: the CSV holds what make_nsys.py put in db/NAME.sqlite (db/NAME.json)
check() {
	if python3 "$G/check_nsys.py" "$1" "$D/$2.json" >"$WORK/check.out" 2>&1; then ok; else
		bad "$(cat "$WORK/check.out")"
	fi
}

# json NAME KEY...: a value of db/NAME.json
json() {
	f=$D/$1.json
	shift
	python3 -c 'import json, sys
v = json.load(open(sys.argv[1]))
for k in sys.argv[2:]:
    v = v[k]
print(v)' "$f" "$@"
}

# 1. both numberings, both column sets, no enum tables: every event as inserted, in time order
for x in nsys_numbering cupti_numbering no_enums leak; do
	expect_status 0 "$C" -o "$x.csv" "$D/$x.sqlite"
	grep -q "(nsys)$" "$WORK/err" && ok || bad "$x: not read as nsys: $(cat "$WORK/err")"
	check "$x.csv" "$x"
	case $x in
	cupti_numbering)
		grep -q 'no session start time' "$WORK/err" && ok || bad "$x: no note of the session start" ;;
	no_enums)
		for t in ENUM_CUDA_MEM_KIND ENUM_CUDA_DEV_MEM_EVENT_OPER ENUM_NSYS_EVENT_TYPE; do
			grep -q "no $t table: .* read in nsys' numbering" "$WORK/err" && ok ||
				bad "$x: no note of $t: $(cat "$WORK/err")"
		done ;;
	*)
		grep -q "read in nsys' numbering\|no session start" "$WORK/err" && bad "$x: a note too many: $(cat "$WORK/err")" || ok ;;
	esac
done

# 2. a bad row: strict, one line naming the file, the rowid and why, nothing written; lenient,
# counted and the rest read as inserted
for x in bad_kind bad_oper bad_null bad_text bad_range; do
	rowid=$(json $x bad rowid)
	expect_status 3 "$C" -o "$x.csv" "$D/$x.sqlite"
	expect_err_line "^memscope-convert: .*/$x\.sqlite:$rowid: $(json $x bad table): $(json $x bad why)"
	expect_absent "$x.csv"
	expect_status 0 "$C" --lenient -o "$x.csv" "$D/$x.sqlite"
	grep -q "skipped 1 bad row (first: .*$x\.sqlite:$rowid: " "$WORK/err" && ok ||
		bad "$x: lenient: $(cat "$WORK/err")"
	check "$x.csv" "$x"
done
expect_status 3 "$C" -o bad_column.csv "$D/bad_column.sqlite"
expect_err_line "^memscope-convert: .*/bad_column\.sqlite: $(json bad_column error)$"
expect_status 3 "$C" --lenient -o bad_column.csv "$D/bad_column.sqlite"
expect_absent bad_column.csv

# 3. the block planted in step 3 of the `step N` ranges is a step leak of step 3
expect_status 0 "$BIN/memscope-leaks" -q --kinds step --pool cuda --format csv "$D/leak.sqlite"
want="^step,.*leak\.sqlite,$(json leak leak pid),0,CUDA,$(json leak leak ptr),$(json leak leak size),"
[ "$(grep -c "$want" "$WORK/out")" -eq 1 ] && ok || bad "leak: not reported: $(cat "$WORK/out")"
[ "$(grep "$want" "$WORK/out" | cut -d, -f12)" = "$(json leak leak step)" ] && ok ||
	bad "leak: not in step $(json leak leak step): $(cat "$WORK/out")"
[ "$(grep -c '^step,' "$WORK/out")" -eq 1 ] && ok || bad "leak: other step leaks: $(cat "$WORK/out")"

# 4. the folded export: each pool's allocated bytes are the bytes the script allocated in it
expect_status 0 "$BIN/memscope-export" -q --format folded -o - "$D/cupti_numbering.sqlite"
for pool in CUDA CUDA_MANAGED HOST_PINNED HOST; do
	got=$(awk -v p="[$pool," 'index($0, p) == 1 { s += $NF } END { print s + 0 }' "$WORK/out")
	[ "$got" = "$(json cupti_numbering bytes "MALLOC $pool")" ] && ok ||
		bad "folded $pool: $got bytes, inserted $(json cupti_numbering bytes "MALLOC $pool")"
done

# 5. the batch finds the exports in a folder (a .sqlite that is no export is left out), one of
# them larger than the walk's look at a file's head
mkdir -p walk/sub
cp "$D/leak.sqlite" walk/
cp "$D/nsys_numbering.sqlite" walk/sub/
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("CREATE TABLE t (a)"); c.commit()' walk/other.sqlite
python3 "$G/make_nsys.py" "$WORK/bigdb" --rows 20000 >/dev/null && cp "$WORK/bigdb/big.sqlite" walk/ ||
	bad "make_nsys.py --rows"
expect_status 0 "$BIN/memscope-batch" -q --format csv -o batch.csv walk
for x in leak nsys_numbering big; do
	json_file=$D/$x.json
	[ $x = big ] && json_file=$WORK/bigdb/big.json
	want=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["events"])' "$json_file")
	got=$(awk -F, -v s="/$x.sqlite" '$1 == "input" && substr($3, length($3) - length(s) + 1) == s { print $6 "," $7 "," $10 }' batch.csv)
	[ "$got" = "nsys,ok,$want" ] && ok || bad "batch: $x: '$got', wanted nsys,ok,$want"
done
grep -q other.sqlite batch.csv && bad "batch read other.sqlite" || ok

# 6. an export recorded without --cuda-memory-usage=true (no memory table, nsys' other tables):
# refused, saying so (issue 29)
python3 -c 'import shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2]); c.execute("DROP TABLE CUDA_GPU_MEMORY_USAGE_EVENTS"); c.commit()' "$D/leak.sqlite" nomem.sqlite
expect_status 3 "$BIN/memscope-leaks" nomem.sqlite
expect_err_line "^memscope-leaks: nomem\.sqlite: an Nsight Systems export without the CUDA_GPU_MEMORY_USAGE_EVENTS table: it was recorded without --cuda-memory-usage=true "

# 7. an export being written (a writer's BEGIN EXCLUSIVE, issue 35): read once the lock goes
# (within the busy timeout, 10 s), else one line naming the file, exit 4
# hold SECONDS FILE: a writer holds FILE exclusively for SECONDS, in the background ($HOLDER),
# once it holds it
hold() {
	rm -f held
	python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[2], isolation_level=None); c.execute("BEGIN EXCLUSIVE")
open("held", "w").close(); time.sleep(float(sys.argv[1])); c.execute("COMMIT")' "$@" &
	HOLDER=$!
	n=0
	while [ ! -e held ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
}
cp "$D/leak.sqlite" locked.sqlite
"$C" -q -o unlocked.csv locked.sqlite
hold 2 locked.sqlite
expect_status 0 "$C" -q -o waited.csv locked.sqlite
expect_same waited.csv unlocked.csv
wait "$HOLDER"
hold 15 locked.sqlite
t0=$(date +%s)
expect_status 4 "$C" -q -o gave_up.csv locked.sqlite
t1=$(date +%s)
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
expect_err_line "^memscope-convert: locked\.sqlite: the database is locked by another process \(a writer at work, such as an export being written\): still locked after 10 s"
expect_absent gave_up.csv
[ $((t1 - t0)) -ge 9 ] && [ $((t1 - t0)) -le 14 ] && ok || bad "locked: gave up after $((t1 - t0)) s, not 10"

# 8. WAL mode (issue 35): an export whose WAL holds three committed blocks and a transaction
# never committed (spilled into it), with no -shm: read as SQLite reads it (the reference: a
# copy checkpointed by SQLite), from a read-only mount too, leaving nothing beside it
# mkwal FROM TO: TO a copy of FROM in WAL mode with that WAL, its writer gone (no -shm)
mkwal() {
	python3 -c 'import os, shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None)
c.execute("PRAGMA journal_mode=WAL"); c.execute("PRAGMA wal_autocheckpoint=0")
kind = c.execute("SELECT id FROM ENUM_CUDA_MEM_KIND WHERE name LIKE \"%KIND_DEVICE\"").fetchone()[0]
op = c.execute("SELECT id FROM ENUM_CUDA_DEV_MEM_EVENT_OPER WHERE name LIKE \"%_ALLOCATION\"").fetchone()[0]
pid = c.execute("SELECT globalPid FROM CUDA_GPU_MEMORY_USAGE_EVENTS LIMIT 1").fetchone()[0]
ins = ("INSERT INTO CUDA_GPU_MEMORY_USAGE_EVENTS (start, globalPid, deviceId, contextId, address, "
       "pc, bytes, memKind, memoryOperationType, correlationId) VALUES (?, ?, 0, 1, ?, 0, ?, ?, ?, ?)")
for t in range(3):
    c.execute(ins, (90000 + t, pid, 0x7770000000 + t * 0x1000000, 123456789 + t, kind, op, 900 + t))
c.execute("PRAGMA cache_size=2"); c.execute("BEGIN")
for i in range(3000):
    c.execute(ins, (100000 + i, pid, 0x7800000000 + i * 4096, 4096, kind, op, 5000 + i))
os.remove(sys.argv[2] + "-shm")
os._exit(0)' "$1" "$2"
}
mkdir -p wal ref
mkwal "$D/leak.sqlite" wal/w.sqlite
cp wal/w.sqlite wal/w.sqlite-wal ref/
python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
c.execute("PRAGMA journal_mode=DELETE"); c.close()' ref/w.sqlite
ls -a wal >wal.before
(cd ref && "$C" -q -o ../ref.csv w.sqlite)
grep -q "size:123456791" ref.csv && ok || bad "WAL: the reference has not the WAL's blocks"
if [ "$(id -u)" -eq 0 ] && unshare --mount sh -c 'mount --bind -o ro wal wal' 2>/dev/null; then
	# shellcheck disable=SC2016 # the inner shell's arguments
	expect_status 0 unshare --mount sh -c 'mount --bind -o ro wal wal && cd wal && exec "$1" -q -o - w.sqlite' sh "$C"
	mv "$WORK/out" ro.csv
	expect_same ro.csv ref.csv
else
	echo "SKIP: WAL on a read-only mount: not root, or unshare --mount fails"
fi
(cd wal && "$C" -q -o ../rw.csv w.sqlite) && ok || bad "WAL: read in a writable folder failed"
expect_same rw.csv ref.csv
ls -a wal >wal.after
expect_same wal.after wal.before
# with a process that has it open (a writer at work): read as SQLite reads it
python3 -c 'import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1]); c.execute("SELECT count(*) FROM StringIds").fetchall()
open("held", "w").close(); time.sleep(20)' wal/w.sqlite &
HOLDER=$!
rm -f held
n=0
while [ ! -e held ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
(cd wal && "$C" -q -o ../open.csv w.sqlite) && ok || bad "WAL held open: read failed"
kill "$HOLDER"
wait "$HOLDER" 2>/dev/null
expect_same open.csv ref.csv
# a WAL that commits nothing: the file alone, as SQLite reads it
rm -rf wal2 && mkdir wal2
python3 -c 'import os, shutil, sqlite3, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2], isolation_level=None); c.execute("PRAGMA journal_mode=WAL")
c.execute("PRAGMA cache_size=2"); c.execute("BEGIN")
for i in range(3000):
    c.execute("INSERT INTO StringIds (value) VALUES (?)", ("x" * 100,))
os.remove(sys.argv[2] + "-shm")
os._exit(0)' "$D/leak.sqlite" wal2/w.sqlite
ls -a wal2 >wal2.before
(cd wal2 && "$C" -q -o ../nothing.csv w.sqlite) && ok || bad "WAL without commits: read failed"
(cd "$D" && "$C" -q -o "$WORK/file_only.csv" leak.sqlite)
sed 's/leak\.sqlite/w.sqlite/' file_only.csv | cmp -s - nothing.csv && ok || bad "WAL without commits: not the file's rows"
ls -a wal2 >wal2.after
expect_same wal2.after wal2.before
# a hostile WAL (checksums right) whose commit says the database is a million pages: refused
python3 -c 'import shutil, sqlite3, struct, sys
shutil.copy(sys.argv[1], sys.argv[2])
c = sqlite3.connect(sys.argv[2]); c.execute("PRAGMA journal_mode=WAL"); c.close()
def sums(data, s):
    s0, s1 = s
    for i in range(0, len(data), 8):
        a, b = struct.unpack("<II", data[i:i + 8])
        s0 = (s0 + a + s1) & 0xffffffff
        s1 = (s1 + b + s0) & 0xffffffff
    return s0, s1
hdr = struct.pack(">IIIIII", 0x377f0682, 3007000, 4096, 0, 1234, 5678)
s = sums(hdr, (0, 0))
page = open(sys.argv[2], "rb").read(4096)
fh = struct.pack(">IIII", 1, 1000000, 1234, 5678)
s2 = sums(page, sums(fh[:8], s))
open(sys.argv[2] + "-wal", "wb").write(hdr + struct.pack(">II", *s) + fh + struct.pack(">II", *s2) + page)' "$D/leak.sqlite" huge.sqlite
expect_status 3 "$C" -q -o huge.csv huge.sqlite
expect_err_line "^memscope-convert: huge\.sqlite: its WAL huge\.sqlite-wal commits a database of 1000000 pages, more than it and the file hold$"

finish
