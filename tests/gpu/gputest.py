"""Helpers shared by the GPU tests: arguments, GPU detection, running gpuscope and the
examples, reading RESULT lines, querying the trace database, and recording checks.

Every test script is run as ``python3 test_X.py --build BUILD_DIR [--scratch DIR]``.
Exit codes: 0 all checks passed, 1 a check failed, 77 skipped (no GPU / no PyTorch).
Each check prints expected and actual values side by side, so the log reads as evidence.
"""
import argparse
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

SKIP = 77
REPO = Path(__file__).resolve().parents[2]
EXAMPLES_PY = REPO / "examples" / "pytorch"
# CUDA launch API names as CUPTI reports them (with or without the _vNNNN suffix).
LAUNCH_PREFIXES = ("cudaLaunch", "cuLaunch")


def parse_args(description, extra=None):
    """Parses --build and --scratch (plus test-specific options added by extra(parser))."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--build", default=str(REPO / "build"), help="gpuscope build dir")
    parser.add_argument("--scratch", default=None, help="folder for traces (default: a temp dir)")
    if extra:
        extra(parser)
    args = parser.parse_args()
    args.build = Path(args.build).resolve()
    if args.scratch is None:
        args.scratch = Path(tempfile.mkdtemp(prefix="gpuscope-gputest-"))
    args.scratch = Path(args.scratch).resolve()
    args.scratch.mkdir(parents=True, exist_ok=True)
    return args


def require_gpu():
    """Exits 77 ('skipped: no GPU') unless nvidia-smi -L works or /dev/nvidia0 exists."""
    has_gpu = Path("/dev/nvidia0").exists()
    if not has_gpu and shutil.which("nvidia-smi"):
        try:
            has_gpu = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            has_gpu = False
    if not has_gpu:
        print("skipped: no GPU")
        sys.exit(SKIP)


def require_torch():
    """Exits 77 unless this python can import torch with CUDA available."""
    code = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        print(f"skipped: no PyTorch with CUDA for {sys.executable} ({r.stderr.strip()[-300:]})")
        sys.exit(SKIP)


def need_file(path, what):
    """Fails the test at once (exit 1, not a skip) when a built file is missing."""
    if not Path(path).exists():
        print(f"FAIL: {what} not found at {path} (build it first)")
        sys.exit(1)
    return Path(path)


def gpuscope_bin(build):
    return need_file(build / "bin" / "gpuscope", "gpuscope binary")


def example_bin(build, name):
    return need_file(build / "bin" / name, f"example {name}")


def pyexample(name):
    return [sys.executable, str(need_file(EXAMPLES_PY / name, f"example {name}"))]


def run(cmd, timeout=300, env=None, label=None):
    """Runs cmd, echoes its command line, exit code and output; returns CompletedProcess."""
    cmd = [str(c) for c in cmd]
    print(f"\n$ {shlex.join(cmd)}", flush=True)
    full_env = dict(os.environ, PYTHONUNBUFFERED="1")
    if env:
        full_env.update(env)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env)
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: timed out after {timeout} s: {label or cmd[0]}")
        print(indent(e.stdout or ""), indent(e.stderr or ""), sep="\n")
        sys.exit(1)
    print(f"  exit code {r.returncode}")
    if r.stdout.strip():
        print("  stdout:\n" + indent(tail(r.stdout)))
    if r.stderr.strip():
        print("  stderr:\n" + indent(tail(r.stderr)))
    return r


def trace(build, scratch, name, target, options=(), timeout=300):
    """Runs `gpuscope trace -o SCRATCH/NAME --force-overwrite OPTIONS -- TARGET...`.

    Returns (CompletedProcess, path of NAME.sqlite)."""
    out = scratch / name
    db = scratch / f"{name}.sqlite"
    cmd = [gpuscope_bin(build), "trace", "-o", out, "--force-overwrite", *options, "--", *target]
    return run(cmd, timeout=timeout), db


def tail(text, lines=40):
    parts = text.rstrip("\n").splitlines()
    if len(parts) > lines:
        parts = [f"... ({len(parts) - lines} lines left out)"] + parts[-lines:]
    return "\n".join(parts)


def indent(text):
    return "\n".join("    " + line for line in text.splitlines())


def result_lines(stdout):
    """The 'RESULT ...' lines of a program's output, in order."""
    return [line.strip() for line in stdout.splitlines() if line.startswith("RESULT ")]


def parse_result(line):
    """'RESULT a=1 b=x' -> {'a': '1', 'b': 'x'}."""
    fields = {}
    for token in line.split()[1:]:
        key, _, value = token.partition("=")
        fields[key] = value
    return fields


def without(fields, *keys):
    """A copy of a RESULT dict without the timing keys that differ run to run."""
    return {k: v for k, v in fields.items() if k not in keys}


def open_db(path):
    """Opens a trace read-only; fails the test if it does not exist."""
    path = Path(path)
    if not path.exists():
        print(f"FAIL: trace {path} was not written")
        sys.exit(1)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    return con


def query(con, sql, params=()):
    return [dict(row) for row in con.execute(sql, params).fetchall()]


def scalar(con, sql, params=()):
    row = con.execute(sql, params).fetchone()
    return None if row is None else row[0]


def show(con, title, sql, params=(), limit=20):
    """Prints a query's rows as evidence."""
    rows = query(con, sql, params)
    print(f"  {title}: {len(rows)} row(s)")
    for row in rows[:limit]:
        print(f"    {row}")
    if len(rows) > limit:
        print(f"    ... {len(rows) - limit} more")
    return rows


def kernel_launches_in(con, pid, start_ns, end_ns, tid=None):
    """Kernels whose launching API call (joined on pid + correlation_id) starts in [start, end]."""
    sql = ("SELECT k.id, k.name, a.name AS api, a.start_ns AS api_start FROM v_kernels k "
           "JOIN v_api_calls a ON a.pid = k.pid AND a.correlation_id = k.correlation_id "
           "WHERE k.pid = ? AND a.start_ns >= ? AND a.start_ns <= ?")
    params = [pid, start_ns, end_ns]
    if tid is not None:
        sql += " AND a.tid = ?"
        params.append(tid)
    return query(con, sql, params)


def data_summary(con):
    """Prints data_loss and messages rows (always useful when reading a failure)."""
    show(con, "data_loss", "SELECT * FROM data_loss")
    show(con, "messages", "SELECT * FROM messages")


class Checks:
    """Collects named checks; finish() prints a summary and exits 0 or 1."""

    def __init__(self, name):
        self.name = name
        self.failed = []
        self.count = 0
        print(f"== GPU test: {name}", flush=True)

    def check(self, ok, what, detail=""):
        self.count += 1
        status = "ok  " if ok else "FAIL"
        print(f"[{status}] {what}" + (f"  ({detail})" if detail else ""), flush=True)
        if not ok:
            self.failed.append(what)
        return ok

    def equal(self, what, expected, actual):
        """Checks expected == actual and prints both side by side."""
        return self.check(expected == actual, what, f"expected {expected!r}, got {actual!r}")

    def require(self, ok, what, detail=""):
        """Like check, but stops the test when it fails (later checks would be noise)."""
        if not self.check(ok, what, detail):
            self.finish()
        return ok

    def finish(self):
        passed = self.count - len(self.failed)
        print(f"\n== {self.name}: {passed}/{self.count} checks passed")
        if self.failed:
            print("failed checks:\n" + "\n".join(f"  - {f}" for f in self.failed))
            sys.exit(1)
        sys.exit(0)
