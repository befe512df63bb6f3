#!/usr/bin/env python3
"""The hostile-input campaign: mutations of every real sample through every tool, both modes.

usage: campaign.py BIN_DIR SRC_DIR [--cases N] [--seed S] [--case I] [--jobs J] [--timeout SEC]
                   [--max-seconds SEC] [--out DIR] [--show N] [--save N] [--tmp DIR]
                   [--modes mutate,nonregular,fulldisk]

Every case takes one sample (the dump CSVs and the python_trace CSV under testdata/, and capture
files and databases made from them at start), mutates it, and runs one tool variant on it twice,
strict and --lenient. Every run is checked:

  crash, sanitizer     killed by a signal, or a sanitizer report on stderr
  hang                 still running after --timeout seconds
  exit_status          exit status outside 0..4; usage_status: 2 (usage) for an input problem;
                       exit_1_unasked: 1 without --fail-on-leak / --fail-on-finding
  invalid_accepted     an input made invalid on purpose (a bad number, a missing column, a cut
  invalid_status       capture, ...; formats/*.md say so) read strictly exits 0/1, or 2/4, not 3
  diag_position        the diagnostic of such an input names the wrong line (or none): lines are
                       counted at every CR LF, LF or lone CR; database rows by rowid
  lenient_silent       --lenient skipped a row it was given without saying so on stderr
  unknown_unreported   a capture record of unknown type skipped without saying so;
                       unknown_record_status: such a record changes the exit status
  benign_status        a change the format allows (CR LF line ends, a byte order mark, blank
                       lines at the end) changes the exit status
  stderr_*             every stderr line starts with "memscope-TOOL: " (one line per diagnostic),
                       holds no control character (below 0x20 but LF, 0x7f, U+0080..U+009F) and
                       is valid UTF-8; a failing run (exit >= 2) says why
  stdout_not_empty     the data goes to -o FILE, so nothing on stdout
  output_left, temp_left, stray_file
                       after a failing run (exit >= 2) no output and no temporary file; after any
                       run no file but the declared outputs (exit 1 is "findings asked to fail
                       on": the report is written, as the man pages show)
  output_missing       exit 0 or 1 without the declared output
  output_bad_json, output_bad_svg
                       a JSON or SVG output that does not parse (exit 0 or 1)
  lenient_differs      a strict run exits 0 but the lenient run of the same input exits
                       otherwise or writes other bytes
  input_changed        the inputs' SHA-256 before and after differ

Two more modes (--modes; all three by default) run fixed cases through every tool, memscope-batch
and memscope-record too (issue 35), each run checked as above where it applies and:

  nonregular           the input a named pipe a writer fills once (read as the file is: the same
                       exit status and output; a database, which SQLite cannot read from a pipe,
                       refused with one line, 3), an empty folder, a link to /dev/zero (3, one
                       line naming it, no hang) or a dangling link (a missing file: 4; for
                       memscope-batch a PATH that does not exist is a usage error, 2, and an input
                       that fails is reported in the written report, memscope-batch(1))
  fulldisk             every variant's outputs onto a full 1 MiB tmpfs, and onto one with room
                       for half of them (root and unshare --mount; else skipped, said): exit 4,
                       one stderr line naming an output and why (the notes a run makes on a free
                       disk too, and memscope-record's shim's own line, aside), nothing left on
                       that disk, the inputs untouched

Runs known to fail in other areas are listed in XFAIL with why: they are reported, not counted,
and one that passes is said, so that its mark can go.

Cases are numbered; case I of seed S is always the same mutation and the same command, so
`--seed S --case I` reruns one. The seed is printed; MEMSCOPE_CAMPAIGN_SEED overrides the
default. Every failing run is listed in --out/failures.txt (default ./campaign-failures); the
first --save failing cases, and the first of each tool and check, are saved there, each run's
directory holding its inputs and a file "case.txt" with the command to rerun it there. Exit
status 0: all passed; 1: failures; 2: usage or setup error.
"""

import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import re
import shlex
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

DEFAULT_SEED = 14  # issue 14; any integer gives another campaign
EXT = {"dump": "csv", "trace": "csv", "capture": "mscap", "db": "db"}
# kinds in the order cases take them: dumps half the cases, captures and databases a fifth each
KIND_CYCLE = ["dump", "capture", "dump", "db", "dump", "capture", "dump", "db", "dump", "trace"]
SANITIZER_RE = re.compile(rb"ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:|"
                          rb"ERROR: libFuzzer|^SUMMARY: \w+Sanitizer", re.M)
SKIP_RE = re.compile(r"skipped \d+")  # cli_report_read: "IN: skipped N bad rows (first: ...)"

# Tool variants. Tokens: {in} the mutated input, {other} the unmutated sample beside it; outputs
# are listed with their kinds (json and svg outputs are parsed). fail_on: exit 1 may be asked for.
VARIANTS = {
    "convert": [
        dict(args="-t csv -o out.csv {in}", outs={"out.csv": ""}),
        dict(args="-t capture -o out.mscap {in}", outs={"out.mscap": ""}),
        dict(args="--time-unit us -t csv -o out.csv {in}", outs={"out.csv": ""}),
    ],
    "compare": [
        dict(args="--input {in},{other} -o out.csv", outs={"out.csv": ""}),
        dict(args="--input {other},{in} --metric delta -o out.csv", outs={"out.csv": ""}),
        dict(args="--input {in},{in} --metric peak -o out.csv", outs={"out.csv": ""}),
        dict(args="--input {other},{in} --level op,kernel -o out.csv", outs={"out.csv": ""}),
        dict(args="--step 1 --input {in},{other} -o out.csv", outs={"out.csv": ""}),
    ],
    "leaks": [
        dict(args="-o out.txt {in}", outs={"out.txt": ""}),
        dict(args="--format json --kinds step,exit --pool all -o out.json {in} {other}",
             outs={"out.json": "json"}),
        dict(args="--format csv --mark iter --fail-on-leak -o out.csv {in}", outs={"out.csv": ""},
             fail_on=True),
        dict(args="--skip-steps 0 --min-steps-alive 2 --fail-on-leak -o out.txt {in}",
             outs={"out.txt": ""}, fail_on=True),
    ],
    "inefficient": [
        dict(args="-o out.txt {in}", outs={"out.txt": ""}),
        dict(args="--format json --idle-threshold 3 --fail-on-finding -o out.json {in}",
             outs={"out.json": "json"}, fail_on=True),
        dict(args="--format csv --annotate ann.csv -o out.csv {in}",
             outs={"out.csv": "", "ann.csv": ""}),
        dict(args="--types temporary_idleness --top 2 --min-size 1K -o out.txt {in} {other}",
             outs={"out.txt": ""}),
    ],
    "db": [
        dict(args="-o out.db {in}", outs={"out.db": "db"}),
        dict(args="-o out.db {in} {other}", outs={"out.db": "db"}),
        dict(args="--to-csv -o out.csv {in}", outs={"out.csv": ""}, strict_only=True, db_only=True),
    ],
    "export": [
        dict(args="-o out.json {in}", outs={"out.json": "json"}),
        dict(args="--format folded --metric leaked --group-by owner -o out.folded {in}",
             outs={"out.folded": ""}),
        dict(args="--format svg --group-by op -o out.svg {in}", outs={"out.svg": "svg"}),
        dict(args="--format chrome-trace -o out.json {in} {other}", outs={"out.json": "json"}),
        dict(args="--format folded --metric peak --pool pta --stack python -o out.folded {in}",
             outs={"out.folded": ""}),
    ],
}
# The tools the mutate and non-regular modes run, cases taking them in turn: those above, then
# every other one built (add_built_tools), so a new tool is in by itself.
TOOLS = list(VARIANTS)
# What a built tool with no variants above (a new one) is run with: every reading tool takes its
# inputs and -o (tools/cli.c).
DEFAULT_VARIANTS = [dict(args="-o out.txt {in}", outs={"out.txt": ""})]

# Values no strict reader may take for a number (formats/dump-csv.md: "Numbers are strict"), a
# few of them hostile to a diagnostic that echoes them: control characters, an escape sequence,
# a line break (quoted), invalid UTF-8.
BAD_NUMBERS = [b"12abc", b"-1", b"", b"12 ", b"99999999999999999999999", b"18446744073709551616",
               b"1.5", b"0x", b"1\x1b[31mred", b"7\x07\x08\x7f", b"9\xff\xfe", b"\xc0\xaf1",
               b"1\x00", b"12\n\x1b[2Jowned", b"3\r\n4", b"5\rX", b"\x1b]0;title\x07",
               b"\xe2\x80\xae21", b"4\xc2\x9b31m"]
BAD_PTRS = [b"0xZZ", b"0x10000000000000000", b"0x", b"-1", b"", b"12abc", b"0x1\x1b[0m",
            b"0x\n1"]
BAD_ATTR_VALUES = [b"12x", b"99999999999999999999999", b"1.5", b"", b"x", b"1\x1b[31m",
                   b"2\x07", b"9\xff", b"1\n2", b"3\r"]
# Bytes inserted anywhere by the chaos mutations.
HOSTILE = [b"\x00", b"\x01", b"\x07", b"\x08", b"\x0b", b"\x0c", b"\x1b", b"\x1b[31m", b"\x1b[2J",
           b"\x1b]0;owned\x07", b"\x7f", b"\x9b", b"\xc2\x9b", b"\xff", b"\xfe\xff", b"\xc3",
           b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xef\xbb\xbf", b"\r", b"\n",
           b"\r\n", b'"', b'""', b",", b'"a\nb"', b'"x\r\ny"', b"\t", b"N/A", b"-",
           b"99999999999999999999999", b"18446744073709551615", b"9223372036854775808",
           b"-9223372036854775809", b"0x" + b"f" * 17, b"1e308", b"{", b"}", b":", b"{size:",
           b"\xe2\x80\xae"]
HUGE = [b"99999999999999999999999", b"18446744073709551616", b"18446744073709551615",
        b"9223372036854775807", b"9223372036854775808", b"4294967296", b"0" * 40 + b"1",
        b"-9223372036854775808", b"1" * 400]
INTERESTING_BYTES = [0x00, 0x01, 0x0a, 0x0d, 0x1b, 0x22, 0x2c, 0x7f, 0x80, 0xc0, 0xff]
DUMP_NUMERIC = ["ID", "Timestamp(ns)", "Timestamp(us)", "Process Id", "Thread Id", "Device Id",
                "Ptr"]
TRACE_COLUMNS = ["StartTime", "EndTime", "Thread Id", "Process Id"]


def line_of(data, pos):
    """1-based physical line of byte pos: a line ends at CR LF, LF or a lone CR."""
    head = data[:pos]
    return head.count(b"\n") + head.count(b"\r") - head.count(b"\r\n") + 1


def csv_records(data):
    """The records of data in the dump CSV dialect (formats/dump-csv.md): a list of lists of
    (start, end, quoted) field spans, and whether the data ends inside a quoted field."""
    recs, fields = [], []
    i, n = 0, len(data)
    if data.startswith(b"\xef\xbb\xbf"):
        i = 3
    start = i
    while i < n:
        c = data[i]
        if c == 0x22 and i == start:  # a quoted field
            j = i + 1
            while True:
                k = data.find(b'"', j)
                if k < 0:
                    fields.append((start, n, True))
                    recs.append(fields)
                    return recs, True
                nxt = data[k + 1:k + 2]
                if nxt == b'"':
                    j = k + 2
                elif nxt in (b",", b"\n", b"\r", b""):
                    i = k + 1
                    break
                else:
                    j = k + 1
            fields.append((start, i, True))
            if i < n and data[i] == 0x2C:
                i += 1
                start = i
                if i == n:
                    fields.append((i, i, False))
            continue
        if c == 0x2C:
            fields.append((start, i, False))
            i += 1
            start = i
            if i == n:
                fields.append((i, i, False))
            continue
        if c in (0x0A, 0x0D):
            if i > start or fields:
                fields.append((start, i, False))
            if fields and not (len(fields) == 1 and fields[0][0] == fields[0][1]):
                recs.append(fields)
            fields = []
            i += 1
            start = i
            continue
        i += 1
    if start < n or fields:
        if start < n:
            fields.append((start, n, False))
        recs.append(fields)
    return recs, False


def field_text(data, span):
    s, e, quoted = span
    return data[s + 1:e - 1] if quoted and e - s >= 2 else data[s:e]


def put_field(data, span, value):
    """data with the field at span replaced by value, quoted when value needs it."""
    s, e, _ = span
    if any(c in value for c in b',"\r\n'):
        value = b'"' + value.replace(b'"', b'""') + b'"'
    return data[:s] + value + data[e:]


def text_lines(data):
    """(start, end) of every line's content (terminator excluded)."""
    out, i, n = [], 0, len(data)
    while i < n:
        j = i
        while j < n and data[j] not in (0x0A, 0x0D):
            j += 1
        out.append((i, j))
        if j < n and data[j] == 0x0D and j + 1 < n and data[j + 1] == 0x0A:
            j += 1
        i = j + 1
    return out


def to_cr_only(data):
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r")


def to_crlf(data):
    return data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def read_varint(b, i):
    v = shift = 0
    for _ in range(10):
        if i >= len(b):
            return None
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
    return None


def cap_records(d):
    """(start, type, payload start, payload length) of every whole record of capture d."""
    if len(d) < 16:
        return []
    i = int.from_bytes(d[12:16], "little")
    out = []
    while i < len(d):
        r = read_varint(d, i + 1)
        if not r or r[1] + r[0] > len(d):
            break
        out.append((i, d[i], r[1], r[0]))
        i = r[1] + r[0]
    return out


class Mutant:
    """A mutated input and what it must do: invalid (strict exit 3), the line its diagnostic
    names, whether --lenient must report a skipped row or a skipped unknown record."""

    def __init__(self, data):
        self.data = data
        self.desc = []
        self.invalid = False
        self.line = None
        self.skip = False
        self.unknown = False
        self.same = False  # the exit status of the unmutated sample


# ---- mutations of dump CSV and python_trace text ----

def m_bad_dump_field(rng, m):
    recs, _ = csv_records(m.data)
    if len(recs) < 2:
        return False
    header = [field_text(m.data, f).strip(b"\xef\xbb\xbf").decode("latin-1") for f in recs[0]]
    cols = [c for c in DUMP_NUMERIC if c in header]
    k = rng.randrange(1, len(recs))
    rec = recs[k]
    if not cols or len(rec) != len(header):
        return False
    col = rng.choice(cols)
    if col == "Ptr":
        value = rng.choice(BAD_PTRS + BAD_NUMBERS[:8])
    else:
        value = rng.choice(BAD_NUMBERS)
    span = rec[header.index(col)]
    # a NUL byte may make the whole file binary data (refused, 3) rather than one bad row
    line = line_of(m.data, rec[0][0])
    m.line = line if b"\x00" not in value else None
    m.data = put_field(m.data, span, value)
    m.desc.append(f"row at line {line}: {col} = {value!r}")
    m.invalid = m.skip = True
    return True


def m_bad_dump_attr(rng, m):
    recs, _ = csv_records(m.data)
    if len(recs) < 2:
        return False
    header = [field_text(m.data, f).strip(b"\xef\xbb\xbf").decode("latin-1") for f in recs[0]]
    if "Attr" not in header or "Event" not in header:
        return False
    a, e = header.index("Attr"), header.index("Event")
    cands = []
    for rec in recs[1:]:
        if len(rec) != len(header) or field_text(m.data, rec[e]) not in (b"MALLOC", b"FREE",
                                                                           b"ACCESS"):
            continue
        text = field_text(m.data, rec[a])
        for mm in re.finditer(rb"(?<=[{,])(allocation_id|size|total|used):([^,}]*)", text):
            cands.append((rec, mm))
    if not cands:
        return False
    rec, mm = rng.choice(cands)
    span = rec[a]
    text = field_text(m.data, span)
    value = rng.choice(BAD_ATTR_VALUES)
    new = text[:mm.start(2)] + value + text[mm.end(2):]
    m.line = line_of(m.data, rec[0][0])
    m.data = put_field(m.data, span, new)
    m.desc.append(f"row at line {m.line}: Attr {mm.group(1).decode()} = {value!r}")
    m.invalid = m.skip = True
    return True


def m_missing_column(rng, m):
    recs, _ = csv_records(m.data)
    if not recs:
        return False
    header = [field_text(m.data, f).strip(b"\xef\xbb\xbf").decode("latin-1") for f in recs[0]]
    req = [c for c in ("ID", "Event", "Event Type", "Name", "Process Id", "Thread Id",
                       "Device Id", "Ptr", "Attr") if c in header]
    if not req:
        return False
    col = rng.choice(req)
    span = recs[0][header.index(col)]
    m.data = put_field(m.data, span, col.encode() + rng.choice([b"X", b"_", b" "]))
    m.desc.append(f"header column {col} renamed")
    m.invalid = True
    return True


def m_open_quote(rng, m):
    recs, _ = csv_records(m.data)
    spans = [f for r in recs for f in r if f[2] and f[1] - f[0] > 2]
    if not spans:
        return False
    s, e, _ = rng.choice(spans)
    for _ in range(8):
        cut = rng.randrange(s + 1, e - 1)
        if csv_records(m.data[:cut])[1]:
            m.data = m.data[:cut]
            m.desc.append(f"cut at byte {cut}, inside a quoted field")
            m.invalid = True
            return True
    return False


def m_bad_trace_field(rng, m):
    lines = text_lines(m.data)
    if len(lines) < 2:
        return False
    k = rng.randrange(1, len(lines))
    s, e = lines[k]
    parts = m.data[s:e].split(b",")
    if len(parts) < 5:
        return False
    col = rng.randrange(4)
    pool = [v for v in BAD_NUMBERS if b"\n" not in v and b"\r" not in v]
    pool += [b"18446744073709551615"] + ([b"N/A"] if col >= 2 else [])
    value = rng.choice(pool)
    parts[len(parts) - 4 + col] = value
    m.data = m.data[:s] + b",".join(parts) + m.data[e:]
    m.line = k + 1 if b"\x00" not in value else None
    m.desc.append(f"line {k + 1}: {TRACE_COLUMNS[col]} = {value!r}")
    m.invalid = m.skip = True
    return True


def m_benign(rng, m):
    """A change the format allows (formats/dump-csv.md: CR LF line ends, a byte order mark, blank
    lines also at the end; the python_trace reader drops a CR before LF): same exit status."""
    ops = ["crlf", "bom", "blank"] if m.data.startswith(b"ID,") else ["crlf"]
    op = rng.choice(ops)
    if op == "crlf":
        m.data = to_crlf(m.data)
    elif op == "bom":
        m.data = b"\xef\xbb\xbf" + m.data
    else:
        m.data = m.data + b"\n" * rng.randint(1, 3)
    m.desc.append({"crlf": "CR LF line ends", "bom": "byte order mark added",
                   "blank": "blank lines at the end"}[op])
    m.same = True
    return True


def chaos_text(rng, m, other):
    d = m.data
    op = rng.choice(["flip", "byte", "truncate", "dup_line", "del_line", "swap_lines", "insert",
                     "insert_field", "huge", "cr_only", "crlf", "mixed_eol", "bom", "quote",
                     "quoted_newline", "long_field", "many_fields", "splice", "ctrl_field",
                     "dup_header", "empty", "header_only"])
    lines = text_lines(d)
    if op == "flip" and d:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(d))
            d = d[:i] + bytes([d[i] ^ (1 << rng.randrange(8))]) + d[i + 1:]
    elif op == "byte" and d:
        i = rng.randrange(len(d))
        d = d[:i] + bytes([rng.choice(INTERESTING_BYTES)]) + d[i + 1:]
    elif op == "truncate":
        d = d[:rng.randrange(len(d) + 1)]
    elif op in ("dup_line", "del_line", "swap_lines") and len(lines) > 1:
        k = rng.randrange(len(lines))
        s, e = lines[k]
        nl = d[e:e + 2] if d[e:e + 2] == b"\r\n" else d[e:e + 1] or b"\n"
        if op == "dup_line":
            d = d[:s] + (d[s:e] + nl) * rng.randint(1, 3) + d[s:]
        elif op == "del_line":
            d = d[:s] + d[e + len(nl):]
        else:
            k2 = rng.randrange(len(lines))
            (a, b), (c, f) = sorted([lines[k], lines[k2]])
            if a != c:
                d = d[:a] + d[c:f] + d[b:c] + d[a:b] + d[f:]
    elif op == "insert":
        i = rng.randrange(len(d) + 1)
        d = d[:i] + rng.choice(HOSTILE) + d[i:]
    elif op == "insert_field":
        commas = [i for i in range(len(d)) if d[i] == 0x2C] or [0]
        i = rng.choice(commas) + 1
        d = d[:i] + rng.choice(HOSTILE) + d[i:]
    elif op == "huge":
        runs = list(re.finditer(rb"\d+", d))
        if runs:
            r = rng.choice(runs)
            d = d[:r.start()] + rng.choice(HUGE) + d[r.end():]
    elif op == "cr_only":
        d = to_cr_only(d)
    elif op == "crlf":
        d = to_crlf(d)
    elif op == "mixed_eol":
        d = re.sub(rb"\r?\n", lambda _: rng.choice([b"\n", b"\r\n", b"\r", b"\n\r"]), d)
    elif op == "bom":
        d = b"\xef\xbb\xbf" * rng.randint(1, 2) + d
    elif op == "quote":
        i = rng.randrange(len(d) + 1)
        d = d[:i] + b'"' + d[i:]
    elif op in ("quoted_newline", "ctrl_field"):
        recs, _ = csv_records(d)
        if len(recs) > 1:
            rec = recs[rng.randrange(1, len(recs))]
            span = rng.choice(rec)
            if op == "quoted_newline":
                v = b"a\nb\r\nc" + rng.choice(HOSTILE) + b"\n"
            else:
                v = bytes(rng.randrange(32) for _ in range(rng.randint(1, 12)))
            d = put_field(d, span, v)
    elif op == "long_field":
        i = rng.choice([i for i in range(len(d)) if d[i] == 0x2C] or [0]) + 1
        d = d[:i] + rng.choice([b"A", b"9", b"\x1b", b"\xff", b"\\"]) * rng.randint(1000, 300000) \
            + d[i:]
    elif op == "many_fields" and lines:
        s, e = rng.choice(lines)
        d = d[:e] + b",x" * rng.randint(1, 2000) + d[e:]
    elif op == "splice" and other:
        a = rng.randrange(len(other) + 1)
        b = rng.randrange(a, min(len(other), a + 4096) + 1)
        i = rng.randrange(len(d) + 1)
        d = d[:i] + other[a:b] + d[i:]
    elif op == "dup_header" and lines:
        s, e = lines[0]
        k = rng.randrange(len(lines))
        d = d[:lines[k][0]] + d[s:e] + b"\n" + d[lines[k][0]:]
    elif op == "empty":
        d = rng.choice([b"", b"\n", b"\xef\xbb\xbf", b"\r\n\r\n"])
    elif op == "header_only" and lines:
        d = d[:lines[0][1] + 1]
    else:
        return False
    m.data = d
    m.desc.append(op)
    return True


# ---- mutations of capture files (formats/capture.md) ----

def m_capture_targeted(rng, m):
    d = m.data
    recs = cap_records(d)
    events = [r for r in recs if r[1] in (0x10, 0x12, 0x13, 0x14, 0x15, 0x17)]
    op = rng.choice(["truncate", "after_end", "version", "header_len", "count", "huge_len",
                     "overlong", "reserved_bits", "kind", "unknown_record", "stopped"])
    if op == "truncate":
        cut = rng.randrange(8, len(d))
        d = d[:cut]
        m.desc.append(f"cut at byte {cut} (of {len(m.data)})")
    elif op == "after_end":
        d = d + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        m.desc.append("bytes after END")
    elif op == "version":
        d = d[:8] + rng.randint(2, 65535).to_bytes(2, "little") + d[10:]
        m.desc.append("major version != 1")
    elif op == "header_len":
        v = rng.choice([0, 1, 8, 15, 4097, 65536, 2**32 - 1])
        d = d[:12] + v.to_bytes(4, "little") + d[16:]
        m.desc.append(f"header length {v}")
    elif op == "count" and events:
        s, _, p, n = rng.choice(events)
        if rng.random() < 0.5:
            d = d[:s] + d[p + n:]
            m.desc.append(f"event record at byte {s} deleted (END count)")
        else:
            d = d[:p + n] + d[s:p + n] + d[p + n:]
            m.desc.append(f"event record at byte {s} doubled (END count)")
    elif op == "huge_len" and recs:
        s, t, p, n = rng.choice(recs)
        v = rng.choice([64 * 1024 * 1024 + 1, 2**32, 2**63, 2**64 - 1])
        d = d[:s + 1] + varint(v) + d[p:]
        m.desc.append(f"record at byte {s}: length {v}")
    elif op == "overlong" and recs:
        s, t, p, n = rng.choice(recs)
        d = d[:s + 1] + b"\xff" * 9 + bytes([rng.randint(2, 127)]) + d[p:]
        m.desc.append(f"record at byte {s}: varint length past 64 bits")
    elif op in ("reserved_bits", "kind") and any(r[1] == 0x10 for r in recs):
        s, t, p, n = rng.choice([r for r in recs if r[1] == 0x10])
        pay = d[p:p + n]
        if op == "kind":
            pay = bytes([rng.randint(100, 255)]) + pay[1:]
            m.desc.append(f"event at byte {s}: unknown kind code")
        else:
            i = 1
            if pay[0] == 0:
                i = read_varint(pay, 1)[1]
            i += 1
            if pay[i - 1] == 0:
                i = read_varint(pay, i)[1]
            f, j = read_varint(pay, i)
            pay = pay[:i] + varint(f | (1 << rng.randint(13, 40))) + pay[j:]
            m.desc.append(f"event at byte {s}: reserved field bit set")
        d = d[:s + 1] + varint(len(pay)) + pay + d[p + n:]
    elif op == "unknown_record" and recs:
        s = rng.choice(recs)[0]
        t = rng.choice([0x06, 0x0F, 0x18, 0x20, 0x42, 0x7F, 0x80, 0xFE, 0xFF])
        pay = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
        d = d[:s] + bytes([t]) + varint(len(pay)) + pay + d[s:]
        m.data = d
        m.desc.append(f"record of unknown type {t:#x} before byte {s}")
        m.unknown = True
        return True
    elif op == "stopped" and recs and recs[-1][1] == 0x01:
        # END made STOPPED (capture.md 3.1): a recording stopped early, refused strictly
        s, _, p, n = recs[-1]
        pay = d[p:p + n] + varint(1) + varint(rng.choice([0, 1, 12345])) + \
            rng.choice([b"No space left on device", b"", b"\x1b[31m\n\xff"])
        d = d[:s] + bytes([0x05]) + varint(len(pay)) + pay + d[p + n:]
        m.desc.append("END made STOPPED (a recording stopped early)")
    else:
        return False
    m.data = d
    m.invalid = True
    return True


def chaos_binary(rng, m, other):
    d = m.data
    recs = cap_records(d) if d.startswith(b"\x89MSCAP") else []
    op = rng.choice(["flip", "byte", "truncate", "insert", "dup_chunk", "del_chunk", "splice",
                     "huge", "rec_del", "rec_dup", "rec_swap", "rec_len", "head_flip"])
    if op == "flip" and d:
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(d))
            d = d[:i] + bytes([d[i] ^ (1 << rng.randrange(8))]) + d[i + 1:]
    elif op == "head_flip" and d:
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(min(len(d), 8192))
            d = d[:i] + bytes([rng.randrange(256)]) + d[i + 1:]
    elif op == "byte" and d:
        i = rng.randrange(len(d))
        d = d[:i] + bytes([rng.choice(INTERESTING_BYTES)]) + d[i + 1:]
    elif op == "truncate":
        d = d[:rng.randrange(len(d) + 1)]
    elif op == "insert":
        i = rng.randrange(len(d) + 1)
        d = d[:i] + rng.choice(HOSTILE) + d[i:]
    elif op in ("dup_chunk", "del_chunk") and d:
        a = rng.randrange(len(d))
        b = rng.randrange(a, min(len(d), a + 512) + 1)
        d = d[:b] + d[a:b] * rng.randint(1, 4) + d[b:] if op == "dup_chunk" else d[:a] + d[b:]
    elif op == "splice" and other:
        a = rng.randrange(len(other) + 1)
        b = rng.randrange(a, min(len(other), a + 4096) + 1)
        i = rng.randrange(len(d) + 1)
        d = d[:i] + other[a:b] + d[i:]
    elif op == "huge" and d:
        i = rng.randrange(len(d))
        d = d[:i] + b"\xff" * rng.randint(1, 12) + b"\x7f" + d[i:]
    elif op in ("rec_del", "rec_dup", "rec_swap") and len(recs) > 1:
        s, _, p, n = rng.choice(recs)
        if op == "rec_del":
            d = d[:s] + d[p + n:]
        elif op == "rec_dup":
            d = d[:p + n] + d[s:p + n] + d[p + n:]
        else:
            s2, _, p2, n2 = rng.choice(recs)
            (a, b), (c, e) = sorted([(s, p + n), (s2, p2 + n2)])
            if a == c:
                return False
            d = d[:a] + d[c:e] + d[b:c] + d[a:b] + d[e:]
    elif op == "rec_len" and recs:
        s, t, p, n = rng.choice(recs)
        d = d[:s + 1] + varint(max(0, n + rng.choice([-3, -2, -1, 1, 2, 3, 100]))) + d[p:]
    else:
        return False
    m.data = d
    m.desc.append(op)
    return True


# ---- mutations of databases (formats/sqlite.md), through SQLite itself ----

def db_edit(data, fn):
    """data after fn(connection) ran on a copy of it; None when fn returns False or SQL fails."""
    with tempfile.TemporaryDirectory() as t:
        path = os.path.join(t, "m.db")
        with open(path, "wb") as f:
            f.write(data)
        con = sqlite3.connect(path)
        con.text_factory = lambda b: b.decode("utf-8", "surrogateescape")
        try:
            ok = fn(con)
            con.commit()
        except (sqlite3.Error, ValueError):  # a damaged file: SQLite's message may not decode
            ok = False
        finally:
            con.close()
        if ok is False:
            return None
        with open(path, "rb") as f:
            return f.read()


def db_table(con):
    names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return next((t for t in ("memscope_dump", "leaks_dump") if t in names), None)


def m_db_targeted(rng, m):
    op = rng.choice(["bad_field", "bad_field", "bad_attr", "missing_column", "no_table"])
    note = {}

    def edit(con):
        t = db_table(con)
        if not t:
            return False
        rows = [r[0] for r in con.execute(f'SELECT rowid FROM "{t}"')]
        if op == "bad_field" and rows:
            k = rng.choice(rows)
            col = rng.choice(["ID", "Timestamp(ns)", "Process Id", "Thread Id", "Device Id",
                              "Ptr"])
            pool = BAD_PTRS if col == "Ptr" else BAD_NUMBERS
            # SQLite keeps a number-looking text in an INTEGER column as a number: take only
            # values that stay text, stored as text bytes exactly
            # (nor a NUL byte, which SQLite's text may end at)
            value = rng.choice([v for v in pool if v not in (b"-1", b"") and b"\x00" not in v]
                               + [b"abc"])
            con.execute(f'UPDATE "{t}" SET "{col}" = CAST(? AS TEXT) WHERE rowid = ?',
                        (value, k))
            got = con.execute(f'SELECT typeof("{col}") FROM "{t}" WHERE rowid = ?',
                              (k,)).fetchone()[0]
            if got != "text":
                return False
            note.update(line=k, desc=f"rowid {k}: {col} = {value!r}", skip=True)
        elif op == "bad_attr" and rows:
            cands = []
            for rowid, ev, attr in con.execute(f'SELECT rowid, "Event", "Attr" FROM "{t}"'):
                if ev not in ("MALLOC", "FREE", "ACCESS") or not isinstance(attr, str):
                    continue
                try:
                    obj = json.loads(attr)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    keys = [k for k in ("allocation_id", "size", "total", "used") if k in obj]
                    if keys:
                        cands.append((rowid, obj, rng.choice(keys)))
            if not cands:
                return False
            rowid, obj, key = rng.choice(cands)
            value = rng.choice([v for v in BAD_ATTR_VALUES if b"\xff" not in v])
            obj[key] = value.decode()
            con.execute(f'UPDATE "{t}" SET "Attr" = ? WHERE rowid = ?', (json.dumps(obj), rowid))
            note.update(line=rowid, desc=f"rowid {rowid}: Attr {key} = {value!r}", skip=True)
        elif op == "missing_column":
            col = rng.choice(["ID", "Event", "Event Type", "Name", "Process Id", "Device Id",
                              "Ptr", "Attr"])
            for v in [r[0] for r in con.execute("SELECT name FROM sqlite_master "
                                                "WHERE type = 'view'")]:
                con.execute(f'DROP VIEW "{v}"')
            con.execute(f'ALTER TABLE "{t}" RENAME COLUMN "{col}" TO "{col}_"')
            note.update(desc=f"column {col} renamed")
        elif op == "no_table":
            for v in [r[0] for r in con.execute("SELECT name FROM sqlite_master "
                                                "WHERE type = 'view'")]:
                con.execute(f'DROP VIEW "{v}"')
            con.execute(f'DROP TABLE "{t}"')
            note.update(desc=f"table {t} dropped")
        else:
            return False
        return True

    out = db_edit(m.data, edit)
    if out is None:
        return False
    m.data = out
    m.desc.append(note["desc"])
    m.invalid = True
    m.line = note.get("line")
    m.skip = note.get("skip", False)
    return True


def chaos_db(rng, m, other):
    if rng.random() < 0.4:
        return chaos_binary(rng, m, other)
    op = rng.choice(["hostile_text", "blob", "huge", "null", "real", "del_rows", "dup_rows",
                     "attr_garbage", "order"])

    def edit(con):
        t = db_table(con)
        if not t:
            return False
        rows = [r[0] for r in con.execute(f'SELECT rowid FROM "{t}"')]
        if not rows:
            return False
        k = rng.choice(rows)
        cols = ["ID", "Event", "Event Type", "Name", "Timestamp(ns)", "Process Id", "Thread Id",
                "Device Id", "Ptr", "Attr", "Call Stack(Python)", "Call Stack(C)"]
        col = rng.choice(cols)
        if op == "hostile_text":
            v = b"".join(rng.choice(HOSTILE) for _ in range(rng.randint(1, 4)))
            con.execute(f'UPDATE "{t}" SET "{col}" = CAST(? AS TEXT) WHERE rowid = ?', (v, k))
        elif op == "blob":
            con.execute(f'UPDATE "{t}" SET "{col}" = ? WHERE rowid = ?',
                        (bytes(rng.randrange(256) for _ in range(rng.randint(0, 24))), k))
        elif op == "huge":
            con.execute(f'UPDATE "{t}" SET "{col}" = ? WHERE rowid = ?',
                        (rng.choice([2**63 - 1, -2**63, 1e300, -1, 0, "1" * 60]), k))
        elif op == "null":
            con.execute(f'UPDATE "{t}" SET "{col}" = NULL WHERE rowid = ?', (k,))
        elif op == "real":
            con.execute(f'UPDATE "{t}" SET "{col}" = ? WHERE rowid = ?', (rng.random() * 1e6, k))
        elif op == "del_rows":
            con.execute(f'DELETE FROM "{t}" WHERE rowid % ? = ?', (rng.randint(2, 5),
                                                                   rng.randint(0, 1)))
        elif op == "dup_rows":
            con.execute(f'INSERT INTO "{t}" SELECT * FROM "{t}" WHERE rowid >= ?', (k,))
        elif op == "attr_garbage":
            v = rng.choice(['{"size":', '[1,2]', '{"a":{"b":{"c":[[[[', '"\\u0000"',
                            '{"size":"1","size":"2"}', '{"allocation_id":"\\u001b[31m"}',
                            '{' + '"k":"v",' * 5000 + '"z":"1"}', 'null', '12'])
            con.execute(f'UPDATE "{t}" SET "Attr" = ? WHERE rowid = ?', (v, k))
        elif op == "order":
            con.execute(f'UPDATE "{t}" SET "Timestamp(ns)" = ? WHERE rowid = ?',
                        (rng.choice([0, 1, 2**62]), k))
        m.desc.append(f"{op} at rowid {k} column {col}" if op not in ("del_rows", "dup_rows")
                      else op)
        return True

    out = db_edit(m.data, edit)
    if out is None:
        return False
    m.data = out
    return True


def mutate(rng, sample, samples):
    """A Mutant of sample: one targeted mutation with its expectations (40 %), else 1 to 4
    chaos mutations that promise nothing."""
    m = Mutant(sample.data)
    others = [s.data for s in samples if s.kind == sample.kind and s is not sample]
    other = rng.choice(others) if others else None
    if rng.random() < 0.4:
        if sample.kind == "dump":
            fn = rng.choice([m_bad_dump_field, m_bad_dump_field, m_bad_dump_attr,
                             m_missing_column, m_open_quote, m_benign])
        elif sample.kind == "trace":
            fn = rng.choice([m_bad_trace_field, m_bad_trace_field, m_benign])
        elif sample.kind == "capture":
            fn = m_capture_targeted
        else:
            fn = m_db_targeted
        if sample.kind in ("dump", "trace") and fn is not m_benign:
            eol = rng.random()
            if eol < 0.3:
                m.data = to_cr_only(m.data)
                m.desc.append("CR-only line ends")
            elif eol < 0.4:
                m.data = to_crlf(m.data)
                m.desc.append("CR LF line ends")
        if fn(rng, m):
            return m
        m = Mutant(sample.data)
    chaos = {"dump": chaos_text, "trace": chaos_text, "capture": chaos_binary, "db": chaos_db}
    for _ in range(rng.randint(1, 4)):
        for _ in range(5):
            if chaos[sample.kind](rng, m, other):
                break
    return m


# ---- samples ----

class Sample:
    def __init__(self, name, kind, data):
        self.name, self.kind, self.data = name, kind, data


def load_samples(bin_dir, src_dir, setup_dir):
    testdata = os.path.join(src_dir, "testdata")
    samples = []
    for root, _, files in sorted(os.walk(testdata)):
        for fn in sorted(files):
            if not fn.endswith(".csv"):
                continue
            path = os.path.join(root, fn)
            with open(path, "rb") as f:
                data = f.read()
            head = data[3:40] if data.startswith(b"\xef\xbb\xbf") else data[:40]
            rel = os.path.relpath(path, testdata)
            if head.startswith(b"ID,"):
                samples.append(Sample(rel, "dump", data))
            elif head.startswith(b"FuncInfo,"):
                samples.append(Sample(rel, "trace", data))

    def tool(args):
        p = subprocess.run([os.path.join(bin_dir, args[0])] + args[1:], cwd=setup_dir,
                           capture_output=True)
        if p.returncode:
            raise RuntimeError(f"setup: {shlex.join(args)}: exit {p.returncode}: "
                               f"{p.stderr.decode(errors='replace').strip()}")

    for src in ["baseline.csv", "stacks_crlf.csv", "memscope_dump_20250428113810.csv",
                "leaks/steps_mstx.csv", "inefficient/rules.csv", "export/ops.csv"]:
        out = os.path.join(setup_dir, src.replace("/", "_").replace(".csv", ".mscap"))
        tool(["memscope-convert", "-q", "-t", "capture", "-o", out,
              os.path.join(testdata, src)])
    tool(["memscope-db", "-q", "-o", os.path.join(setup_dir, "baseline_trace.db"),
          os.path.join(testdata, "baseline.csv"), os.path.join(testdata, "db/python_trace.csv")])
    tool(["memscope-db", "-q", "-o", os.path.join(setup_dir, "steps_mstx.db"),
          os.path.join(testdata, "leaks/steps_mstx.csv")])
    tool(["memscope-db", "-q", "-o", os.path.join(setup_dir, "legacy.db"),
          os.path.join(testdata, "memscope_dump_20250428113811.csv")])
    ref = os.path.join(setup_dir, "reference.db")
    con = sqlite3.connect(ref)
    with open(os.path.join(testdata, "db/reference_db.sql")) as f:
        con.executescript(f.read())
    con.close()
    for fn in sorted(os.listdir(setup_dir)):
        with open(os.path.join(setup_dir, fn), "rb") as f:
            data = f.read()
        samples.append(Sample(fn + " (made)", "capture" if fn.endswith(".mscap") else "db",
                              data))
    return samples


# ---- one case: a mutated input through one tool variant, strict and lenient ----

class Campaign:
    def __init__(self, a):
        self.a = a
        self.bin_dir = os.path.abspath(a.bin_dir)
        self.work = tempfile.mkdtemp(prefix="campaign.", dir=a.tmp)
        self.samples = load_samples(self.bin_dir, a.src_dir, self._mkdir("setup"))
        self.by_kind = {k: [s for s in self.samples if s.kind == k] for k in EXT}
        self.controls = {}
        self.lock = threading.Lock()
        self.n_runs = 0
        self.n_controls = 0
        self.saved, self.saved_keys = set(), set()  # failing cases kept, their (tool, check)

    def validate(self):
        """Every variant on the first sample of each kind, strict and lenient, must run without
        a usage error: else the campaign's own command lines are wrong. None or a message."""
        for kind in ("dump", "db"):
            sample = self.by_kind[kind][0]
            for tool, variants in VARIANTS.items():
                for v, var in enumerate(variants):
                    for lenient in (False, True) if not var.get("strict_only") else (False,):
                        if var.get("db_only") and kind != "db":
                            continue
                        rc, err = self.control(sample, tool, v, lenient)
                        if rc not in (0, 1, 3):
                            return (f"setup: {shlex.join(self.command(tool, v, lenient, 'x'))} "
                                    f"on the unmutated {sample.name}: exit {rc}: "
                                    f"{' | '.join(sorted(err))[:500]}")
        return None

    def _mkdir(self, name):
        d = os.path.join(self.work, name)
        os.makedirs(d)
        return d

    def plan(self, i):
        """The case numbered i: (sample, tool, variant index, Mutant), all from the seed."""
        rng = random.Random(f"{self.a.seed}/{i}")
        tool = TOOLS[i % len(TOOLS)]
        j = i // len(TOOLS)
        kind = KIND_CYCLE[j % len(KIND_CYCLE)]
        pool = self.by_kind[kind]
        sample = pool[(j // len(KIND_CYCLE)) % len(pool)]
        variants = VARIANTS[tool]
        v = rng.randrange(len(variants))
        if variants[v].get("db_only") and kind != "db" and rng.random() < 0.8:
            v = 0
        return sample, tool, v, mutate(rng, sample, self.samples)

    def command(self, tool, v, lenient, ext):
        var = VARIANTS[tool][v]
        args = [a.replace("{in}", "in." + ext).replace("{other}", "other." + ext)
                for a in var["args"].split()]
        return ["memscope-" + tool] + (["--lenient"] if lenient else []) + args

    def execute(self, tool, v, lenient, sample, data, tag):
        """Run one command in a fresh directory; returns a result dict (directory kept)."""
        ext = EXT[sample.kind]
        d = self._mkdir(tag)
        inputs = {"in." + ext: data}
        cmd = self.command(tool, v, lenient, ext)
        if any("other." in a for a in cmd):
            inputs["other." + ext] = sample.data
        for fn, content in inputs.items():
            with open(os.path.join(d, fn), "wb") as f:
                f.write(content)
        t0 = time.monotonic()
        r = dict(dir=d, cmd=cmd, inputs=inputs, timeout=False, rc=None, out=b"", err=b"")
        # its own process group, so that a hang is killed whole
        p = subprocess.Popen([os.path.join(self.bin_dir, cmd[0])] + cmd[1:], cwd=d,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = p.communicate(timeout=self.a.timeout)
            r.update(rc=p.returncode, out=out, err=err)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            r.update(timeout=True, out=out, err=err)
        r["seconds"] = time.monotonic() - t0
        with self.lock:
            self.n_runs += 1
        return r

    def control(self, sample, tool, v, lenient):
        """Exit status and stderr lines of the unmutated sample (cached)."""
        key = (sample.name, tool, v, lenient)
        with self.lock:
            ev = self.controls.get(key)
            if ev is None:
                ev = self.controls[key] = [threading.Event(), None]
                mine = True
            else:
                mine = False
        if mine:
            r = self.execute(tool, v, lenient, sample, sample.data,
                             f"unmutated-{len(self.controls)}-{threading.get_ident()}")
            shutil.rmtree(r["dir"], ignore_errors=True)
            ev[1] = (r["rc"], set(r["err"].decode("utf-8", "replace").splitlines()))
            with self.lock:
                self.n_controls += 1
            ev[0].set()
        ev[0].wait()
        return ev[1]

    def check(self, tool, v, lenient, sample, m, r):
        """The failed checks of run r as (check, detail) pairs."""
        var = VARIANTS[tool][v]
        fails = []
        rc, err = r["rc"], r["err"]
        in_name = "in." + EXT[sample.kind]
        if r["timeout"]:
            return [("hang", f"still running after {self.a.timeout} s")]
        san = SANITIZER_RE.search(err)
        if rc < 0:
            try:
                name = signal.Signals(-rc).name
            except ValueError:
                name = str(-rc)
            fails.append(("crash", f"killed by {name}"))
        if san:
            line = err[san.start():].split(b"\n")[0]
            fails.append(("sanitizer", line.decode("utf-8", "replace")[:200]))
        if rc < 0 or san:
            return fails
        if rc > 4:
            fails.append(("exit_status", f"exit {rc}"))
        elif rc == 2:
            fails.append(("usage_status", "exit 2 (usage) for an input problem"))
        elif rc == 1 and not var.get("fail_on"):
            fails.append(("exit_1_unasked", "exit 1 without --fail-on-*"))
        reads = sample.kind != "trace" or (tool == "db" and not var.get("db_only"))
        if m.invalid and not lenient and rc != 3:
            fails.append(("invalid_accepted" if rc in (0, 1) else "invalid_status",
                          f"exit {rc}, wanted 3 ({'; '.join(m.desc)})"))
        # stderr: one line per diagnostic, each "memscope-TOOL: ...", printable, UTF-8
        prefix = f"memscope-{tool}: ".encode()
        loose = err.decode("utf-8", "replace")
        try:
            text = err.decode("utf-8")
        except UnicodeDecodeError as e:
            text = None
            fails.append(("stderr_utf8", f"invalid UTF-8 at byte {e.start}: "
                          f"{err[max(0, e.start - 40):e.start + 20]!r}"))
        lines = err.split(b"\n")
        if err and lines[-1]:
            fails.append(("stderr_unterminated", f"last line {lines[-1][:80]!r}"))
        for ln in lines[:-1] if err else []:
            if not ln.startswith(prefix):
                fails.append(("stderr_multiline", f"line not starting with the tool name: "
                              f"{ln[:120]!r}"))
                break
        bad = re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", err)
        if bad:
            ln = err[:bad.start()].rsplit(b"\n", 1)[-1] + err[bad.start():].split(b"\n")[0]
            fails.append(("stderr_control", f"byte {err[bad.start()]:#04x} in {ln[:160]!r}"))
        if text is not None:
            c1 = re.search("[\u0080-\u009f]", text)
            if c1:
                fails.append(("stderr_c1_control", f"U+{ord(c1.group()):04X} in "
                              f"{text[max(0, c1.start() - 60):c1.start() + 20]!r}"))
        if rc >= 2 and not err.strip():
            fails.append(("silent_failure", f"exit {rc} and nothing on stderr"))
        if r["out"]:
            fails.append(("stdout_not_empty", f"{r['out'][:80]!r}"))
        # the position of the diagnostic of a row made bad on purpose
        if m.line and reads and (m.invalid and not lenient or m.skip and lenient and rc in (0, 1)):
            crc, _ = self.control(sample, tool, v, False)
            if crc in (0, 1):
                pos = re.findall(rb"(?:^|[ (])" + re.escape(in_name.encode()) + rb":(\d+):", err,
                                 re.M)
                if not pos:
                    fails.append(("diag_position", f"no {in_name}:LINE: diagnostic, wanted line "
                                  f"{m.line} ({'; '.join(m.desc)})"))
                elif int(pos[0]) != m.line:
                    fails.append(("diag_position", f"{in_name}:{int(pos[0])}, wanted line "
                                  f"{m.line} ({'; '.join(m.desc)})"))
        if m.skip and lenient and reads and rc in (0, 1) and not SKIP_RE.search(loose):
            fails.append(("lenient_silent", f"exit {rc} and no 'skipped N' report "
                          f"({'; '.join(m.desc)})"))
        if m.unknown:
            crc, clines = self.control(sample, tool, v, lenient)
            if rc != crc:
                fails.append(("unknown_record_status", f"exit {rc}, {crc} without the record "
                              f"({'; '.join(m.desc)})"))
            elif rc in (0, 1) and not any("unknown" in ln.lower() and ln not in clines
                                          for ln in loose.splitlines()):
                fails.append(("unknown_unreported", f"no stderr line says a record was "
                              f"skipped ({'; '.join(m.desc)})"))
        if m.same:
            crc, _ = self.control(sample, tool, v, lenient)
            if rc != crc:
                fails.append(("benign_status", f"exit {rc}, {crc} without the change "
                              f"({'; '.join(m.desc)})"))
        # files: inputs untouched; outputs exactly when the run succeeded
        names = set(os.listdir(r["dir"]))
        for fn, content in r["inputs"].items():
            if fn not in names:
                fails.append(("input_changed", f"{fn} removed"))
            else:
                with open(os.path.join(r["dir"], fn), "rb") as f:
                    if hashlib.sha256(f.read()).digest() != hashlib.sha256(content).digest():
                        fails.append(("input_changed", f"{fn}: SHA-256 differs"))
        extra = names - set(r["inputs"])
        outs = var["outs"]
        if rc >= 2:
            left = sorted(extra & set(outs))
            if left:
                fails.append(("output_left", f"exit {rc} left {', '.join(left)}"))
            extra -= set(outs)
        else:
            missing = sorted(set(outs) - names)
            if missing:
                fails.append(("output_missing", f"exit {rc} without {', '.join(missing)}"))
            extra -= set(outs)
        tmp = sorted(x for x in extra if ".tmp." in x)
        if tmp:
            fails.append(("temp_left", f"exit {rc} left {', '.join(tmp)}"))
        stray = sorted(extra - set(tmp))
        if stray:
            fails.append(("stray_file", f"exit {rc} left {', '.join(stray)}"))
        if rc in (0, 1):
            for fn, kind in outs.items():
                path = os.path.join(r["dir"], fn)
                if not os.path.exists(path) or kind not in ("json", "svg"):
                    continue
                with open(path, "rb") as f:
                    body = f.read()
                try:
                    if kind == "json":
                        json.loads(body.decode("utf-8"))
                    else:
                        ET.fromstring(body)
                except (ValueError, ET.ParseError) as e:
                    fails.append((f"output_bad_{kind}", f"{fn}: {str(e)[:120]}"))
        return fails

    def run_case(self, i):
        """Returns (case number, description, [(mode, result, fails)])."""
        sample, tool, v, m = self.plan(i)
        out = []
        strict = None
        for lenient in (False, True):
            if lenient and VARIANTS[tool][v].get("strict_only"):
                continue
            tag = f"case-{i}-{'l' if lenient else 's'}"
            r = self.execute(tool, v, lenient, sample, m.data, tag)
            fails = self.check(tool, v, lenient, sample, m, r)
            if lenient and strict and strict["rc"] == 0 and not r["timeout"]:
                fails += self.compare_modes(tool, v, strict, r)
            out.append(("lenient" if lenient else "strict", r, fails))
            strict = r
        return i, sample, tool, v, m, out

    def compare_modes(self, tool, v, s, l):
        if l["rc"] != 0:
            return [("lenient_differs", f"strict exit 0, lenient exit {l['rc']}")]
        for fn, kind in VARIANTS[tool][v]["outs"].items():
            if kind == "db":
                continue
            a, b = os.path.join(s["dir"], fn), os.path.join(l["dir"], fn)
            if os.path.exists(a) and os.path.exists(b):
                with open(a, "rb") as f, open(b, "rb") as g:
                    if f.read() != g.read():
                        return [("lenient_differs", f"{fn} differs between strict and lenient")]
        return []


# ---- non-regular inputs and a full disk (issue 35) ----

# The tools' variants the two modes run besides VARIANTS': batch's, and record's (which reads
# no input: its program is true(1)).
EXTRA_VARIANTS = {
    "batch": [dict(args="--format csv -o out.csv {in}", outs={"out.csv": ""}),
              dict(args="--format json -o out.json {in} {other}", outs={"out.json": "json"})],
    "record": [dict(args="-o out.mscap -- true", outs={"out.mscap": ""}, no_input=True)],
}
ALL_VARIANTS = {**VARIANTS, **EXTRA_VARIANTS}


def add_built_tools(bin_dir):
    """Every memscope-* program of bin_dir without variants here into TOOLS (after the others, by
    name), run with DEFAULT_VARIANTS."""
    for name in sorted(os.listdir(bin_dir)):
        path, tool = os.path.join(bin_dir, name), name[len("memscope-"):]
        if (name.startswith("memscope-") and tool not in ALL_VARIANTS and os.path.isfile(path)
                and os.access(path, os.X_OK)):
            VARIANTS[tool] = ALL_VARIANTS[tool] = DEFAULT_VARIANTS
            TOOLS.append(tool)
# What an input that is not a regular file gets: (exit status, whether the output is written).
# A missing file is an I/O error, exit 4, as the man pages say; the others invalid input, 3.
# memscope-batch (memscope-batch(1)) writes its report with an input that fails, and takes a
# PATH that does not exist for a usage error.
FORMS = {"dir": (3, False), "zero": (3, False), "dangling": (4, False), "fifo-db": (3, False)}
BATCH_FORMS = {"dir": (3, False), "zero": (3, True), "dangling": (2, False), "fifo-db": (3, True)}
# Runs known to fail until they are mended (none now): (mode, tool, label
# start) -> why. Such a run failing is counted apart (not a campaign failure), one passing is
# said so the mark can go.
XFAIL = {}
NO_SPACE_RE = re.compile(rb"No space left on device|disk is full")
# run in a mount namespace of its own: a 1 MiB tmpfs at $1, full but for $3 bytes; the command;
# what it left there listed into $2
FULL_SH = r"""T=$1; L=$2; free=$3; shift 3
mount -t tmpfs -o size=1m tmpfs "$T" || exit 125
cd "$T" || exit 125
cat /dev/zero >.fill 2>/dev/null
[ "$free" -gt 0 ] && truncate -s "-$free" .fill
"$@"
rc=$?
rm -f .fill
ls -A >"$L"
exit $rc"""


def stderr_fails(tool, err, lines=None):
    """Checks of a run's stderr: every line "memscope-TOOL: ...", printable; lines: how many."""
    fails = []
    prefix = f"memscope-{tool}: ".encode()
    got = err.split(b"\n")
    if err and got[-1]:
        fails.append(("stderr_unterminated", f"last line {got[-1][:80]!r}"))
    got = got[:-1] if err else []
    if any(not ln.startswith(prefix) for ln in got):
        fails.append(("stderr_multiline", f"a line not starting with the tool name: {err[:200]!r}"))
    if re.search(rb"[\x00-\x09\x0b-\x1f\x7f]", err):
        fails.append(("stderr_control", f"{err[:200]!r}"))
    if lines is not None and len(got) != lines:
        fails.append(("stderr_lines", f"{len(got)} lines, wanted {lines}: {err[:300]!r}"))
    return fails


class Special:
    """The non-regular-input and full-disk modes: fixed runs, each checked on its own."""

    def __init__(self, c):
        self.c = c
        self.results = []  # (mode, label, cmd, dir, fails)
        self.n = 0

    def sample(self, kind, name):
        return next(s for s in self.c.by_kind[kind] if s.name.startswith(name))

    def command(self, tool, v, paths, quiet=False):
        var = ALL_VARIANTS[tool][v]
        args = [a.replace("{in}", paths["in"]).replace("{other}", paths["other"])
                for a in var["args"].split()]
        if args and args[0] == "true":
            args[0] = shutil.which("true") or "/bin/true"
        return ["memscope-" + tool] + (["-q"] if quiet else []) + args

    def run(self, cmd, cwd, wrap=None, timeout=None):
        argv = [os.path.join(self.c.bin_dir, cmd[0])] + cmd[1:]
        p = subprocess.Popen((wrap or []) + argv, cwd=cwd, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout or self.c.a.timeout)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, err = p.communicate()
            return None, out, err

    def record(self, mode, label, cmd, d, fails):
        self.n += 1
        why = next((w for (m, t, k), w in XFAIL.items() if m == mode and cmd[0] == "memscope-" + t
                    and (label.startswith(k) or k in cmd)), None)
        self.results.append((mode, label, cmd, d, fails, why))
        if not fails:
            shutil.rmtree(d, ignore_errors=True)

    def case_dir(self, tag, sample, other=True):
        d = self.c._mkdir(f"{tag}-{self.n}-{len(self.results)}")
        ext = EXT[sample.kind]
        if other:
            with open(os.path.join(d, "other." + ext), "wb") as f:
                f.write(sample.data)
        return d, ext

    def control(self, tool, v, sample, quiet=False, paths_abs=False):
        """rc, outputs (name -> bytes) and stderr of the variant on the regular file (paths_abs:
        given by absolute paths, as the full-disk runs give them)."""
        d, ext = self.case_dir("control", sample)
        with open(os.path.join(d, "in." + ext), "wb") as f:
            f.write(sample.data)
        paths = {"in": "in." + ext, "other": "other." + ext}
        if paths_abs:
            paths = {k: os.path.join(d, p) for k, p in paths.items()}
        rc, _, err = self.run(self.command(tool, v, paths, quiet), d)
        outs = {}
        for fn in ALL_VARIANTS[tool][v]["outs"]:
            path = os.path.join(d, fn)
            if os.path.exists(path):
                with open(path, "rb") as f:
                    outs[fn] = f.read()
        shutil.rmtree(d, ignore_errors=True)
        return rc, outs, err.replace(d.encode(), b"@")

    # -- inputs that are not regular files --

    def fifo(self, tool, v, sample):
        """The input a named pipe a writer fills once: read as the file is (a database, which
        SQLite cannot read from a pipe: refused, 3, one line naming it)."""
        rc_c, outs_c, _ = self.control(tool, v, sample)
        d, ext = self.case_dir("fifo", sample)
        path = os.path.join(d, "in." + ext)
        os.mkfifo(path)
        stop = threading.Event()

        def writer():
            fd = -1
            while not stop.is_set():  # the tool may never open it
                try:
                    fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    break
                except OSError:
                    time.sleep(0.005)
            if fd < 0:
                return
            os.set_blocking(fd, True)
            try:
                os.write(fd, sample.data)
            except OSError:
                pass  # the tool stopped reading
            os.close(fd)

        t = threading.Thread(target=writer)
        t.start()
        cmd = self.command(tool, v, {"in": "in." + ext, "other": "other." + ext},
                           quiet=tool == "batch")
        rc, out, err = self.run(cmd, d)
        stop.set()
        t.join()
        fails = self.common(tool, v, d, rc, out, err, "in." + ext, lambda: stat_is(path, "fifo"))
        if rc is None:
            pass
        elif sample.kind == "db":
            want, written = (BATCH_FORMS if tool == "batch" else FORMS)["fifo-db"]
            if rc != want:
                fails.append(("fifo_status", f"a database as a pipe: exit {rc}, wanted {want}: "
                              f"{err[:300]!r}"))
            fails += stderr_fails(tool, err, 1)
            fails += self.written(tool, v, d, rc, written)
        elif rc != rc_c:
            fails.append(("fifo_status", f"exit {rc}, {rc_c} from the file itself: "
                          f"{err[:300]!r}"))
        else:
            fails += stderr_fails(tool, err)
            for fn, body in outs_c.items():
                if fn.endswith(".db"):
                    continue
                path_out = os.path.join(d, fn)
                if os.path.exists(path_out):
                    with open(path_out, "rb") as f:
                        if f.read() != body:
                            fails.append(("fifo_output", f"{fn} differs from the file's"))
        self.record("nonregular", f"in.{ext} a FIFO of {sample.name}", cmd, d, fails)

    def form(self, tool, v, sample, form):
        """The input a folder, a link to /dev/zero or a dangling link: one line naming it, exit
        3 (a missing file 4), nothing written (FORMS, BATCH_FORMS)."""
        d, ext = self.case_dir(form, sample)
        path = os.path.join(d, "in." + ext)
        if form == "dir":
            os.mkdir(path)
            intact = lambda: os.path.isdir(path) and not os.listdir(path)
        else:
            target = "/dev/zero" if form == "zero" else os.path.join(d, "no-such-file")
            os.symlink(target, path)
            intact = lambda: os.path.islink(path) and os.readlink(path) == target
        cmd = self.command(tool, v, {"in": "in." + ext, "other": "other." + ext},
                           quiet=tool == "batch")
        rc, out, err = self.run(cmd, d)
        fails = self.common(tool, v, d, rc, out, err, "in." + ext, intact)
        want, written = (BATCH_FORMS if tool == "batch" else FORMS)[form]
        if rc is not None:
            if rc != want:
                fails.append((f"{form}_status", f"exit {rc}, wanted {want}: {err[:300]!r}"))
            fails += stderr_fails(tool, err, 1)
            fails += self.written(tool, v, d, rc, written)
            if b"in." + ext.encode() not in err:
                fails.append(("not_named", f"the line does not name in.{ext}: {err[:200]!r}"))
        self.record("nonregular", f"in.{ext} {form}", cmd, d, fails)

    def common(self, tool, v, d, rc, out, err, in_name, intact):
        """Hang, crash, stdout, the input's entry, the files left."""
        fails = []
        if rc is None:
            return [("hang", f"still running after {self.c.a.timeout} s")]
        if rc < 0 or SANITIZER_RE.search(err):
            fails.append(("crash", f"exit {rc}: {err[-300:]!r}"))
        if out:
            fails.append(("stdout_not_empty", f"{out[:80]!r}"))
        if not intact():
            fails.append(("input_changed", f"{in_name} is not what it was"))
        outs = set(ALL_VARIANTS[tool][v]["outs"])
        left = set(os.listdir(d)) - {in_name} - {n for n in os.listdir(d) if n.startswith("other.")}
        if left - outs:
            fails.append(("stray_file", f"exit {rc} left {', '.join(sorted(left - outs))}"))
        return fails

    def written(self, tool, v, d, rc, want):
        """The outputs of a failing run: all there when the report is written with the failure
        (memscope-batch), else none."""
        outs = set(ALL_VARIANTS[tool][v]["outs"])
        there = {fn for fn in outs if os.path.exists(os.path.join(d, fn))}
        if want and there != outs:
            return [("output_missing", f"exit {rc} without {', '.join(sorted(outs - there))}")]
        if not want and there:
            return [("output_left", f"exit {rc} left {', '.join(sorted(there))}")]
        return []

    def nonregular(self):
        dump = self.sample("dump", "baseline.csv")
        kinds = [dump, self.sample("capture", "baseline.mscap"),
                 self.sample("db", "baseline_trace.db")]
        for tool in TOOLS + ["batch"]:
            for sample in kinds:
                self.fifo(tool, 0, sample)
            for form in ("dir", "zero", "dangling"):
                self.form(tool, 0, dump, form)

    # -- a full disk --

    def fulldisk_ok(self):
        if os.geteuid() != 0 or not shutil.which("unshare"):
            return False
        p = subprocess.run(["unshare", "--mount", "sh", "-c",
                            'mount -t tmpfs -o size=64k tmpfs "$1"', "sh", self.c.work],
                           capture_output=True)
        return p.returncode == 0

    def full(self, tool, v, sample):
        """Every output onto a full disk (or one with room for half of it): exit 4, one line
        naming an output and why (record: and the shim's line), nothing left there, the input
        untouched."""
        var = ALL_VARIANTS[tool][v]
        rc_c, outs_c, err_c = self.control(tool, v, sample, quiet=True, paths_abs=True)
        if rc_c not in (0, 1):
            return
        notes = set(err_c.split(b"\n"))
        size = sum(len(b) for b in outs_c.values())
        frees = [0] + ([(size // 2) & ~4095] if size >= 8192 else [])
        for free in frees:
            d, ext = self.case_dir("full", sample)
            with open(os.path.join(d, "in." + ext), "wb") as f:
                f.write(sample.data)
            tiny = os.path.join(d, "tiny")
            os.mkdir(tiny)
            listing = os.path.join(d, "left.txt")
            paths = {"in": os.path.join(d, "in." + ext), "other": os.path.join(d, "other." + ext)}
            cmd = self.command(tool, v, paths, quiet=True)
            rc, out, err = self.run(cmd, tiny, wrap=["unshare", "--mount", "sh", "-c", FULL_SH,
                                                     "sh", tiny, listing, str(free)])
            err = err.replace(d.encode(), b"@")
            fails = []
            if rc is None:
                fails.append(("hang", f"still running after {self.c.a.timeout} s"))
            elif rc == 125:
                fails.append(("setup", f"the tmpfs: {err[:200]!r}"))
            else:
                if rc != 4:
                    fails.append(("full_status", f"exit {rc}, wanted 4: {err[:300]!r}"))
                if rc < 0 or SANITIZER_RE.search(err):
                    fails.append(("crash", f"exit {rc}"))
                # the notes the run makes on a free disk too (what a gate could not check),
                # and the shim's own line, are not the one line about the output
                mine = [ln for ln in err.split(b"\n")[:-1] if ln not in notes and
                        not (tool == "record" and b": recording stopped: " in ln)]
                fails += stderr_fails(tool, err, len(err.split(b"\n")) - 1)
                if len(mine) != 1:
                    fails.append(("stderr_lines", f"{len(mine)} lines, wanted 1: {err[:300]!r}"))
                elif not any(o.encode() in mine[0] for o in var["outs"]) or \
                        not NO_SPACE_RE.search(mine[0]) and tool != "record":
                    fails.append(("full_line", f"the line names no output or no full disk: "
                                  f"{mine[0][:200]!r}"))
                if out:
                    fails.append(("stdout_not_empty", f"{out[:80]!r}"))
                try:
                    with open(listing) as f:
                        left = f.read().split()
                except OSError:
                    left = ["(no listing)"]
                if left:
                    fails.append(("output_left", f"exit {rc} left {', '.join(left)} on the disk"))
                for fn in ("in." + ext, "other." + ext):
                    with open(os.path.join(d, fn), "rb") as f:
                        if f.read() != sample.data:
                            fails.append(("input_changed", f"{fn}: its bytes differ"))
            self.record("fulldisk", f"free {free} B of {size} B of output", cmd, d, fails)

    def fulldisk(self):
        dump, db = self.sample("dump", "baseline.csv"), self.sample("db", "baseline_trace.db")
        for tool, variants in ALL_VARIANTS.items():
            for v, var in enumerate(variants):
                self.full(tool, v, db if var.get("db_only") else dump)


def stat_is(path, what):
    """Whether path is (still) a named pipe (what "fifo")."""
    try:
        m = os.lstat(path).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(m) if what == "fifo" else False


def shown(cmd):
    """A command line for the log: printable, whatever bytes its arguments hold."""
    return shlex.join(cmd)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin_dir")
    ap.add_argument("src_dir")
    ap.add_argument("--cases", type=int, default=500, help="cases (2 runs each)")
    ap.add_argument("--seed", type=int,
                    default=int(os.environ.get("MEMSCOPE_CAMPAIGN_SEED", DEFAULT_SEED)))
    ap.add_argument("--case", type=int, action="append", help="run only these cases")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=20, help="seconds per run (a hang)")
    ap.add_argument("--max-seconds", type=float, default=0,
                    help="stop starting cases after this long (0: no limit)")
    ap.add_argument("--out", default="campaign-failures", help="where failing cases are saved")
    ap.add_argument("--show", type=int, default=30, help="failing runs listed (all: failures.txt)")
    ap.add_argument("--save", type=int, default=200,
                    help="failing cases saved (and the first of each tool and check)")
    ap.add_argument("--tmp", default=None, help="scratch directory (default: the system's)")
    ap.add_argument("--modes", default="mutate,nonregular,fulldisk",
                    help="what to run: mutate (the cases), nonregular (inputs that are no "
                    "regular file), fulldisk (outputs onto a full disk; root)")
    a = ap.parse_args()
    modes = set(a.modes.split(","))
    if modes - {"mutate", "nonregular", "fulldisk"}:
        print(f"campaign: --modes: unknown {', '.join(sorted(modes - {'mutate', 'nonregular', 'fulldisk'}))}",
              file=sys.stderr)
        return 2
    if not os.path.exists(os.path.join(a.bin_dir, "memscope-convert")):
        print(f"campaign: no memscope-convert in {a.bin_dir}", file=sys.stderr)
        return 2
    add_built_tools(a.bin_dir)
    t0 = time.monotonic()
    try:
        c = Campaign(a)
    except (RuntimeError, OSError, sqlite3.Error) as e:
        print(f"campaign: {e}", file=sys.stderr)
        return 2
    bad = c.validate()
    if bad:
        print(f"campaign: {bad}", file=sys.stderr)
        return 2
    out_dir = os.path.abspath(a.out)
    shutil.rmtree(out_dir, ignore_errors=True)
    special = Special(c)
    if "nonregular" in modes and not a.case:
        special.nonregular()
    if "fulldisk" in modes and not a.case:
        if special.fulldisk_ok():
            special.fulldisk()
        else:
            print("campaign: the full-disk mode skipped: it needs root and unshare --mount "
                  "(a tmpfs of its own)")
    if special.n:
        print(f"campaign: {special.n} runs on inputs that are no regular file and outputs onto a "
              f"full disk, {time.monotonic() - t0:.0f} s", flush=True)
    cases = (a.case if a.case else list(range(a.cases))) if "mutate" in modes else []
    kinds = {k: len(v) for k, v in c.by_kind.items()}
    print(f"campaign: seed {a.seed} (--seed or MEMSCOPE_CAMPAIGN_SEED to change), {len(cases)} "
          f"cases, samples: {kinds['dump']} dump CSV, {kinds['trace']} python_trace, "
          f"{kinds['capture']} capture, {kinds['db']} database; timeout {a.timeout:g} s per run",
          flush=True)
    results, stopped = [], 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        pending = {}
        it = iter(cases)
        while True:
            while len(pending) < 2 * max(1, a.jobs):
                if a.max_seconds and time.monotonic() - t0 > a.max_seconds:
                    stopped = len(cases) - len(results) - len(pending)
                    break
                i = next(it, None)
                if i is None:
                    break
                pending[ex.submit(c.run_case, i)] = i
            if not pending:
                break
            done, _ = concurrent.futures.wait(pending, return_when="FIRST_COMPLETED")
            for f in done:
                del pending[f]
                res = f.result()
                results.append(res)
                save_or_drop(c, res, out_dir)
            if stopped:
                for f in pending:
                    results.append(f.result())
                    save_or_drop(c, results[-1], out_dir)
                break
    results.sort(key=lambda x: x[0])
    failed_runs, by_check, listed = 0, {}, 0
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "failures.txt"), "w") as log:
        for i, sample, tool, v, m, runs in results:
            for mode, r, fails in runs:
                if not fails:
                    continue
                failed_runs += 1
                saved = os.path.join(out_dir, f"case-{i:05d}", mode)
                if i not in c.saved:
                    saved = "(not saved: over --save cases)"
                for check, detail in fails:
                    key = (f"memscope-{tool}", check)
                    if key not in by_check or i in c.saved and by_check[key][1][0] not in c.saved:
                        by_check[key] = [by_check.get(key, [0])[0], (i, mode, r, detail, saved)]
                    by_check[key][0] += 1
                checks = "; ".join(f"{ch}: {de}" for ch, de in fails)
                line = (f"FAIL case {i} [{mode}] {shown(r['cmd'])}: {checks} "
                        f"(seed {a.seed}; {sample.name}: {'; '.join(m.desc) or 'unmutated'}; "
                        f"saved in {saved})")
                log.write(line + "\n")
                if listed < a.show:
                    listed += 1
                    print(line)
        for k, (mode, label, cmd, d, fails, xfail) in enumerate(special.results):
            if xfail and not fails:
                print(f"campaign: XPASS [{mode}] {shown(cmd)} ({label}): marked to fail "
                      f"({xfail}), passes: the mark in XFAIL can go")
            if not fails:
                continue
            if xfail:
                print(f"campaign: XFAIL [{mode}] {shown(cmd)} ({label}): {xfail}")
                shutil.rmtree(d, ignore_errors=True)
                continue
            failed_runs += 1
            saved = os.path.join(out_dir, f"{mode}-{k:03d}")
            shutil.move(d, saved)
            with open(os.path.join(saved, "case.txt"), "w") as f:
                f.write(f"{mode}: {label}\nrerun here: {os.path.join(c.bin_dir, cmd[0])} "
                        f"{shlex.join(cmd[1:])}\n")
                for check, detail in fails:
                    f.write(f"FAIL {check}: {detail}\n")
            checks = "; ".join(f"{ch}: {de}" for ch, de in fails)
            line = (f"FAIL [{mode}] {shown(cmd)} ({label}): {checks} (saved in {saved})")
            log.write(line + "\n")
            print(line)
    for (tool, check), (n, (i, mode, r, detail, saved)) in sorted(by_check.items()):
        print(f"campaign: {tool} {check}: {n} runs; e.g. case {i} [{mode}]: {detail}")
        print(f"  rerun: cd {saved} && {os.path.join(c.bin_dir, r['cmd'][0])} "
              f"{shlex.join(r['cmd'][1:])}")
    shutil.rmtree(c.work, ignore_errors=True)
    n = sum(len(x[5]) for x in results) + special.n
    note = f", stopped {stopped} cases early (--max-seconds {a.max_seconds:g})" if stopped else ""
    print(f"campaign: seed {a.seed}, {len(results)} cases, {n} runs (+{c.n_controls} on unmutated "
          f"samples), {n - failed_runs} passed, {failed_runs} failed, "
          f"{time.monotonic() - t0:.0f} s{note}")
    if failed_runs:
        print(f"campaign: every failing run in {out_dir}/failures.txt; one case again: "
              f"{sys.argv[0]} {a.bin_dir} {a.src_dir} --seed {a.seed} --case N")
    else:
        shutil.rmtree(out_dir, ignore_errors=True)
    return 1 if failed_runs else 0


def save_or_drop(c, res, out_dir):
    """Keep a failing case's directories (inputs, command, stderr) under out_dir; drop the rest."""
    i, sample, tool, v, m, runs = res
    keys = {(tool, check) for _, _, fails in runs for check, _ in fails}
    keep = keys and (len(c.saved) < c.a.save or keys - c.saved_keys)
    if keep:
        c.saved.add(i)
        c.saved_keys |= keys
    case_dir = os.path.join(out_dir, f"case-{i:05d}")
    for mode, r, fails in runs:
        if keep:
            dest = os.path.join(case_dir, mode)
            os.makedirs(case_dir, exist_ok=True)
            shutil.move(r["dir"], dest)
            # outputs out of the way of a rerun; the inputs as the run got them
            for fn in os.listdir(dest):
                path = os.path.join(dest, fn)
                if fn not in r["inputs"]:
                    os.rename(path, os.path.join(dest, "left." + fn))
                    continue
                with open(path, "rb") as f:
                    changed = f.read() != r["inputs"][fn]
                if changed:
                    os.rename(path, path + ".after-run")
            for fn, content in r["inputs"].items():
                with open(os.path.join(dest, fn), "wb") as f:
                    f.write(content)
            with open(os.path.join(dest, "case.txt"), "w") as f:
                f.write(f"seed {c.a.seed} case {i}: sample {sample.name}, mutations: "
                        f"{'; '.join(m.desc) or 'none'}\n")
                f.write(f"rerun here: {os.path.join(c.bin_dir, r['cmd'][0])} "
                        f"{shlex.join(r['cmd'][1:])}\n")
                f.write(f"exit: {'timeout' if r['timeout'] else r['rc']}\n")
                for check, detail in fails:
                    f.write(f"FAIL {check}: {detail}\n")
                f.write("stderr:\n")
                f.write(r["err"].decode("utf-8", "backslashreplace"))
        else:
            shutil.rmtree(r["dir"], ignore_errors=True)
        r["dir"] = None


if __name__ == "__main__":
    sys.exit(main())
