#!/usr/bin/env python3
"""Runner of the CLI golden cases written as data (tests/cli/cases/TOOL.test; the format is in
tests/cli/cases/README.md): each case in a work dir of its own, one line per case, every failed
check with the case's name, the file's line and a diff.

Usage: run.py BIN_DIR SRC_DIR FILE.test [CASE...]   run the file's cases, or the ones named (a
                                                    case with %%each: NAME runs every instance,
                                                    NAME/LABEL one)
       run.py --list FILE.test                      print the case names, one a line (CMake)
Exit: 0 every check passed, 1 a check failed, 2 a malformed case file or bad arguments, 77 every
case run was skipped (a program in %%needs is missing).
"""
import difflib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
VAR = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
HEREDOC = re.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1")
# directives whose argument is shell text (may continue with \ or a heredoc)
SHELL_STEPS = ("!", "$", "check", "set", "same-as")
FILE_STEPS = {"same": 2, "absent": 1, "exists": 1, "has": 1, "lacks": 1, "cd": 1}
STREAM_RE = ("stdout-has", "stdout-lacks", "stderr-has", "stderr-lacks", "stderr-line")


class Malformed(Exception):
    pass


class Step:
    def __init__(self, lineno, kind, arg):
        self.lineno, self.kind, self.arg = lineno, kind, arg
        self.lines = None  # the '|' lines of a stdout/stderr block
        self.status = 0  # a '$' step's wanted exit status


class Case:
    def __init__(self, name, lineno):
        self.name, self.lineno = name, lineno
        self.steps, self.needs, self.each = [], [], []  # each: (label, {var: value})


def logical_lines(path):
    """(line number, text) of FILE's lines, a shell step's continuation lines (a trailing
    backslash, a heredoc up to its terminator) joined to it with newlines."""
    with open(path, encoding="utf-8") as fh:
        raw = fh.read().split("\n")
    if raw and raw[-1] == "":
        raw.pop()
    i = 0
    while i < len(raw):
        start, text = i + 1, raw[i]
        i += 1
        word = text.lstrip().split(" ", 1)[0]
        if word in SHELL_STEPS and text.rstrip().endswith("{"):
            # a brace group: up to a line '}' (the shell runs it as it is)
            while i < len(raw) and raw[i] != "}":
                text += "\n" + raw[i]
                i += 1
            if i >= len(raw):
                raise Malformed(f"{path}:{start}: '{{' not closed by a line '}}'")
            text += "\n}"
            i += 1
        elif word in SHELL_STEPS:
            while text.endswith("\\") and i < len(raw):
                text += "\n" + raw[i]
                i += 1
            for m in HEREDOC.finditer(text):
                end = m.group(2)
                while True:
                    if i >= len(raw):
                        raise Malformed(f"{path}:{start}: heredoc {end} not closed")
                    text += "\n" + raw[i]
                    i += 1
                    if raw[i - 1] == end or (m.group(0).startswith("<<-") and raw[i - 1].lstrip("\t") == end):
                        break
        yield start, text


def parse(path):
    """The file's setup steps and its cases; Malformed on a line it cannot read."""
    setup, cases, cur, block = [], [], None, None
    where = os.path.basename(path)

    def bad(lineno, msg):
        raise Malformed(f"{where}:{lineno}: {msg}")

    for lineno, text in logical_lines(path):
        line = text.strip() if "\n" not in text else text.lstrip()
        if block is not None and line.startswith("|"):
            if line != "|" and not line.startswith("| "):
                bad(lineno, "an expected line is '| TEXT' or '|'")
            block.lines.append(line[2:])
            continue
        block = None
        if not line or line.startswith("#"):
            continue
        if line.startswith("%%"):
            word, _, rest = line.partition(" ")
            rest = rest.strip()
            if word == "%%setup":
                if cases:
                    bad(lineno, "%%setup comes before the first %%case")
                cur = "setup"
            elif word == "%%case":
                if not NAME.match(rest) or any(c.name == rest for c in cases):
                    bad(lineno, f"case name {rest!r}: not a name, or used twice")
                cur = Case(rest, lineno)
                cases.append(cur)
            elif word in ("%%each", "%%needs"):
                if not isinstance(cur, Case) or cur.steps:
                    bad(lineno, f"{word} comes right after its %%case")
                if word == "%%needs":
                    cur.needs += rest.split()
                    continue
                label, _, assigns = rest.partition(" ")
                values = {}
                for a in shlex.split(assigns):
                    var, eq, val = a.partition("=")
                    if not eq or not VAR.match(var):
                        bad(lineno, f"%%each: {a!r} is not VAR=VALUE")
                    values[var] = val
                if not NAME.match(label) or any(label == e[0] for e in cur.each):
                    bad(lineno, f"%%each label {label!r}: not a name, or used twice")
                cur.each.append((label, values))
            else:
                bad(lineno, f"unknown {word}")
            continue
        if cur is None:
            bad(lineno, "a step before %%setup or the first %%case")
        steps = setup if cur == "setup" else cur.steps
        if line[:2] in ("! ", "$ "):
            kind, arg = line[0], line[2:]
        else:
            kind, _, arg = line.partition(" ")
            arg = arg.lstrip(" ") if "\n" in arg else arg.strip()
        step = Step(lineno, kind, arg)
        if kind == "status":
            if not steps or steps[-1].kind != "$" or steps[-1].status != 0 or not arg.isdigit():
                bad(lineno, "'status N' comes right after its '$' line")
            steps[-1].status = int(arg)
            continue
        if kind in ("stdout", "stderr"):
            if arg.startswith("= ") and len(arg.split()) == 2:
                step.arg = arg.split()[1]
            elif arg:
                bad(lineno, f"'{kind}' alone (then '|' lines) or '{kind} = FILE'")
            else:
                step.lines = []
                block = step
        elif kind in FILE_STEPS:
            words = arg.split(" ", FILE_STEPS[kind]) if kind in ("has", "lacks") else arg.split()
            if len(words) != FILE_STEPS[kind] + (kind in ("has", "lacks")):
                ere = " and an ERE" if kind in ("has", "lacks") else ""
                bad(lineno, f"'{kind}' takes {FILE_STEPS[kind]} file(s){ere}")
        elif kind == "set":
            var = arg.split(" ", 1)[0]
            if not VAR.match(var) or len(arg.split(" ", 1)) < 2:
                bad(lineno, "'set VAR COMMAND'")
        elif kind not in SHELL_STEPS and kind not in STREAM_RE:
            bad(lineno, f"unknown step {kind!r}")
        if not arg and kind not in ("stdout", "stderr"):
            bad(lineno, f"'{kind}' without its argument")
        if kind.startswith(("stdout", "stderr", "same-as")) and not any(s.kind == "$" for s in steps):
            if cur == "setup" or not any(s.kind == "$" for s in setup):
                bad(lineno, f"'{kind}' with no '$' command before it")
        steps.append(step)
    if not cases:
        raise Malformed(f"{where}: no %%case")
    return setup, cases


def instances(cases):
    """(test name, case, {var: value}) of every case, one per %%each line."""
    for c in cases:
        if not c.each:
            yield c.name, c, {}
        for label, values in c.each:
            yield f"{c.name}/{label}", c, values


class Run:
    """One case's run: its work dir, its variables, its last command's captures, its counts."""

    def __init__(self, bin_dir, src_dir, where, name, values):
        self.where, self.name = where, name
        self.root = tempfile.mkdtemp(prefix="memscope-case.")
        self.work = os.path.join(self.root, "work")
        os.mkdir(self.work)
        self.cwd = self.work
        self.out, self.err = os.path.join(self.root, "out"), os.path.join(self.root, "err")
        self.vars = {"BIN": bin_dir, "SRC": src_dir, "WORK": self.work, "OUT": self.out, "ERR": self.err}
        self.vars.update(values)
        self.last = None  # (status, stdout, stderr) of the last '$'
        self.passed = self.failed = 0

    def expand(self, text, lineno):
        def var(m):
            if m.group(1) not in self.vars:
                raise Malformed(f"{self.where}:{lineno}: ${{{m.group(1)}}} is not set")
            return self.vars[m.group(1)]

        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", var, text)

    def path(self, name, lineno):
        return os.path.join(self.cwd, self.expand(name, lineno))

    def sh(self, text, out, err):
        env = dict(os.environ)
        env.update(self.vars)
        env["PATH"] = self.vars["BIN"] + os.pathsep + env.get("PATH", "/usr/bin:/bin")
        with open(out, "wb") as o, open(err, "wb") as e:
            return subprocess.run(["sh", "-c", text], cwd=self.cwd, env=env, stdin=subprocess.DEVNULL,
                                  stdout=o, stderr=e).returncode

    def check(self, ok, step, msg, detail=""):
        if ok:
            self.passed += 1
            return
        self.failed += 1
        print(f"FAIL {self.name}: {self.where}:{step.lineno}: {msg}")
        if detail:
            print("".join("  " + l + "\n" for l in detail.rstrip("\n").split("\n")), end="")


def read(path):
    with open(path, "rb") as fh:
        return fh.read()


def show(data, limit=2000):
    text = data[:limit].decode("utf-8", "replace")
    return "".join("| " + l + "\n" for l in text.split("\n")[:-1 if text.endswith("\n") else None]) + (
        f"| ... ({len(data)} bytes)\n" if len(data) > limit else "")


def diff(want, got, want_name, got_name):
    """A unified diff of two byte strings, or where they part when either is not text."""
    try:
        a, b = want.decode("utf-8").splitlines(True), got.decode("utf-8").splitlines(True)
    except UnicodeDecodeError:
        n = next((i for i, (x, y) in enumerate(zip(want, got)) if x != y), min(len(want), len(got)))
        return f"binary: {len(want)} and {len(got)} bytes, first difference at byte {n}"
    lines = list(difflib.unified_diff(a, b, want_name, got_name, n=2))
    text = "".join(l if l.endswith("\n") else l + "\n\\ No newline at end of file\n" for l in lines[:40])
    return text + (f"... ({len(lines) - 40} more diff lines)\n" if len(lines) > 40 else "")


def grep(pattern, path):
    """grep -aE's answer: True (a line matches), False (none), None (bad pattern)."""
    argv = ["grep", "-a", "-E", "-q", "-e", pattern, "--", path]
    st = subprocess.run(argv, stderr=subprocess.DEVNULL).returncode
    return {0: True, 1: False}.get(st)


def step_command(run, s):
    """The steps that run shell text: '!', '$', 'check', 'set', 'same-as'."""
    if s.kind == "$":
        st = run.sh(s.arg, run.out, run.err)
        run.last = (st, read(run.out), read(run.err))
        run.check(st == s.status, s, f"exit {st}, wanted {s.status}: {s.arg}", show(run.last[2], 600))
        return
    out, err = run.out + ".step", run.err + ".step"
    if s.kind == "same-as":
        st = run.sh(s.arg, out, err)
        got = (st, read(out), read(err))
        run.check(got[0] == run.last[0], s, f"exit {got[0]}, the '$' before it {run.last[0]}: {s.arg}")
        run.check(got[1] == run.last[1], s, "stdout differs from the '$' before it",
                  diff(run.last[1], got[1], "stdout of the '$'", "stdout of same-as"))
        run.check(got[2] == run.last[2], s, "stderr differs from the '$' before it",
                  diff(run.last[2], got[2], "stderr of the '$'", "stderr of same-as"))
        return
    text = s.arg.split(" ", 1)[1] if s.kind == "set" else s.arg
    st = run.sh(text, out, err)
    if s.kind == "check":
        run.check(st == 0, s, f"check exited {st}: {text}", show(read(out) + read(err), 1200))
    elif st != 0:
        # a setup step that fails fails the case (and counts as a failed check)
        run.check(False, s, f"setup step exited {st}: {text}", show(read(err), 600))
    elif s.kind == "set":
        run.vars[s.arg.split(" ", 1)[0]] = read(out).decode("utf-8", "replace").rstrip("\n")


def step_expect(run, s):
    """The checks of files and of the last '$' command's output."""
    if s.kind in ("stdout", "stderr"):
        got = run.last[1 if s.kind == "stdout" else 2]
        if s.lines is None:
            want_path = run.path(s.arg, s.lineno)
            want = read(want_path) if os.path.exists(want_path) else None
            what = f"{s.kind} is not {s.arg}" if want is not None else f"{s.arg}: no such file"
            run.check(want == got, s, what,
                      diff(want, got, s.arg, s.kind) if want is not None else "")
        else:
            want = "".join(run.expand(l, s.lineno) + "\n" for l in s.lines).encode()
            run.check(want == got, s, f"{s.kind} differs from the expected lines",
                      diff(want, got, "expected", s.kind))
    elif s.kind in STREAM_RE:
        stream = s.kind.split("-")[0]
        got, cap = (run.last[1], run.out) if stream == "stdout" else (run.last[2], run.err)
        pattern = run.expand(s.arg, s.lineno)
        m = grep(pattern, cap)
        if m is None:
            raise Malformed(f"{run.where}:{s.lineno}: grep -E refuses {pattern!r}")
        if s.kind == "stderr-line":
            ok, what = got.count(b"\n") == 1 and m, "is not one line matching"
        elif s.kind.endswith("-has"):
            ok, what = m, "has no line matching"
        else:
            ok, what = not m, "has a line matching"
        run.check(ok, s, f"{stream} {what} '{pattern}'", f"{stream}:\n" + show(got))
    elif s.kind == "same":
        a, b = (run.path(w, s.lineno) for w in s.arg.split())
        missing = [p for p in (a, b) if not os.path.isfile(p)]
        if missing:
            run.check(False, s, f"same {s.arg}: no such file {missing[0]}")
        else:
            da, db = read(a), read(b)
            run.check(da == db, s, f"files differ: {s.arg}", diff(db, da, s.arg.split()[1], s.arg.split()[0]))
    elif s.kind == "absent":
        p = run.path(s.arg, s.lineno)
        d, base = os.path.split(p)
        left = [f for f in (os.listdir(d) if os.path.isdir(d) else []) if f.startswith(base + ".tmp.")]
        what = f"output left behind: {s.arg} {' '.join(left)}".rstrip()
        run.check(not os.path.exists(p) and not left, s, what)
    elif s.kind == "exists":
        here = " ".join(sorted(os.listdir(run.cwd))[:40])
        run.check(os.path.isfile(run.path(s.arg, s.lineno)), s, f"no file {s.arg} (here: {here})")
    elif s.kind in ("has", "lacks"):
        name, pattern = s.arg.split(" ", 1)
        p, pattern = run.path(name, s.lineno), run.expand(pattern, s.lineno)
        m = grep(pattern, p) if os.path.isfile(p) else False
        if m is None:
            raise Malformed(f"{run.where}:{s.lineno}: grep -E refuses {pattern!r}")
        ok = m if s.kind == "has" else (not m and os.path.isfile(p))
        what = "has no line matching" if s.kind == "has" else "has a line matching"
        run.check(ok, s, f"{name} {what} '{pattern}'" if os.path.isfile(p) else f"{name}: no such file",
                  show(read(p)) if os.path.isfile(p) else "")
    elif s.kind == "cd":
        run.cwd = run.path(s.arg, s.lineno)


def run_one(bin_dir, src_dir, where, name, case, values, setup):
    """Run one case instance: prints its failures and its closing 'ok'/'FAIL' line; returns
    (passed, failed, skipped)."""
    missing = [p for p in case.needs if shutil.which(p) is None]
    if missing:
        print(f"skip {name}: no {' '.join(missing)}")
        return 0, 0, True
    run = Run(bin_dir, src_dir, where, name, values)
    for s in setup + case.steps:
        if s.kind in SHELL_STEPS:
            step_command(run, s)
        else:
            step_expect(run, s)
    if run.passed + run.failed == 0:
        run.failed = 1  # a case that asserts nothing is a defect
        print(f"FAIL {name}: {where}:{case.lineno}: the case asserts nothing")
    if run.failed:
        n = run.passed + run.failed
        print(f"FAIL {name} ({run.failed} of {n} checks failed; work dir kept: {run.work})")
    else:
        shutil.rmtree(run.root, ignore_errors=True)
        print(f"ok {name} ({run.passed} checks)")
    return run.passed, run.failed, False


def main(argv):
    if len(argv) == 3 and argv[1] == "--list":
        _, cases = parse(argv[2])
        for name, _, _ in instances(cases):
            print(name)
        return 0
    if len(argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bin_dir, src_dir = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    setup, cases = parse(argv[3])
    tool = os.path.splitext(os.path.basename(argv[3]))[0]
    wanted = argv[4:]
    todo = [(n, c, v) for n, c, v in instances(cases) if not wanted or n in wanted or c.name in wanted]
    unknown = [w for w in wanted if not any(w in (n, c.name) for n, c, _ in todo)]
    if unknown:
        print(f"{argv[3]}: no case {' '.join(unknown)}", file=sys.stderr)
        return 2
    passed = failed = skipped = n_failed = 0
    for name, case, values in todo:
        p, f, s = run_one(bin_dir, src_dir, os.path.basename(argv[3]), f"{tool}/{name}", case, values, setup)
        passed, failed, skipped, n_failed = passed + p, failed + f, skipped + s, n_failed + (f > 0)
    n_ok = len(todo) - n_failed - skipped
    print(f"{passed} passed, {failed} failed (checks of {len(todo)} cases: {n_ok} ok, {n_failed} failed, "
          f"{skipped} skipped)")
    if failed:
        return 1
    return 77 if skipped == len(todo) else 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except Malformed as e:
        print(f"run.py: {e}", file=sys.stderr)
        sys.exit(2)
