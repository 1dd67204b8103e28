#!/usr/bin/env bash
# Every numeric option of every command fed nan, inf, -1, 0, 1e308 and 2^64: either a clear
# error that names the option and quotes the value, or the documented meaning of that value
# (--top 0 = all rows, --delay 0, --launch-count 0 = all, ...); a refused value exits 2, the
# code every command documents for a bad option, and so does any bad option of every command
# (CLI11 alone would exit 105, 106, 109 ...); every time option takes the one duration syntax
# ("10s", "250ms"; `gpuscope start srv --duration 10s` as the docs write it). Runs with no GPU and no
# GPUSCOPE_SKIP_DRIVER_CHECK: a command that needs a GPU (trace, kernels, bench OP, peak)
# must refuse a bad value before it looks for the driver. --help states each range.
# Usage: test_option_values.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
bin="$(cd "$1" && pwd)/bin/gpuscope"
src="$(cd "$2" && pwd)"
data="$(cd "$1" && pwd)/test-data"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset GPUSCOPE_SKIP_DRIVER_CHECK

python3 - "$bin" "$src" "$data" "$work" <<'PY'
import os, subprocess, sys

gpuscope, src, data, work = sys.argv[1:5]
cnn = f"{data}/cnn.sqlite"
profile = f"{src}/tests/data/profile-h100.json"
HOSTILE = ["nan", "inf", "-1", "0", "1e308", "18446744073709551616"]

# (label, argv with VALUE where the value goes, option named in the error, values with a
# documented meaning that must be accepted)
CASES = [
    ("trace --delay", ["trace", "-o", f"{work}/t", "--delay", "VALUE", "--", "true"], "--delay", {"0"}),
    ("trace --duration", ["trace", "-o", f"{work}/t", "--duration", "VALUE", "--", "true"], "--duration", {"0"}),
    ("trace --flush-period", ["trace", "-o", f"{work}/t", "--flush-period", "VALUE", "--", "true"], "--flush-period", set()),
    ("trace --top", ["trace", "-o", f"{work}/t", "--top", "VALUE", "--", "true"], "--top", {"0"}),
    ("trace --gpu-metrics", ["trace", "-o", f"{work}/t", "--gpu-metrics=VALUE", "--", "true"], "--gpu-metrics", set()),
    ("trace --python-sampling", ["trace", "-o", f"{work}/t", "--python-sampling=VALUE", "--", "true"],
     "--python-sampling", set()),
    ("summary --top", ["summary", cnn, "--top", "VALUE"], "--top", {"0"}),
    ("stats --top", ["stats", cnn, "-r", "cuda_gpu_kern_sum", "--top", "VALUE"], "--top", {"0"}),
    ("stats --from", ["stats", cnn, "-r", "cuda_gpu_kern_sum", "--from", "VALUE"], "--from", {"0"}),
    ("stats --to", ["stats", cnn, "-r", "cuda_gpu_kern_sum", "--to", "VALUE"], "--to", {"0"}),
    ("stats --process", ["stats", cnn, "-r", "cuda_gpu_kern_sum", "--process", "VALUE"], "--process", set()),
    ("stats --device", ["stats", cnn, "-r", "cuda_gpu_kern_sum", "--device", "VALUE"], "--device", {"0"}),
    ("kernels --launch-skip", ["kernels", "--launch-skip", "VALUE", "--", "true"], "--launch-skip", {"0"}),
    ("kernels --launch-count", ["kernels", "--launch-count", "VALUE", "--", "true"], "--launch-count", {"0"}),
    ("kernels --launches-per-session", ["kernels", "--launches-per-session", "VALUE", "--", "true"],
     "--launches-per-session", set()),
    ("kernels --tensor-factor", ["kernels", "--tensor-factor", "sm__inst_executed_pipe_tensor.sum=VALUE", "--", "true"],
     "--tensor-factor", set()),
    ("bench --sizes", ["bench", "copy", "--sizes", "VALUE"], "--sizes", set()),
    ("bench --batch", ["bench", "copy", "--batch", "VALUE"], "--batch", {"0"}),
    ("bench --budget", ["bench", "copy", "--budget", "VALUE"], "--budget", set()),
    ("bench --max-noise", ["bench", "copy", "--max-noise", "VALUE"], "--max-noise", {"0"}),
    ("bench --min-samples", ["bench", "copy", "--min-samples", "VALUE"], "--min-samples", set()),
    ("bench --device", ["bench", "copy", "--device", "VALUE"], "--device", {"0"}),
    ("bench compare --floor", ["bench", "compare", "a.json", "b.json", "--floor", "VALUE"], "--floor", {"0"}),
    ("bench compare --k", ["bench", "compare", "a.json", "b.json", "--k", "VALUE"], "--k", {"0"}),
    ("peak --device", ["peak", "--device", "VALUE", "--no-save"], "--device", {"0"}),
    ("monitor --interval", ["monitor", "--once", "--interval", "VALUE"], "--interval", set()),
    ("monitor --sample-rate", ["monitor", "--once", "--sample-rate", "VALUE"], "--sample-rate", set()),
    ("monitor --duration", ["monitor", "--once", "--duration", "VALUE"], "--duration", {"0"}),
    ("monitor --gpu", ["monitor", "--once", "--gpu", "VALUE"], "--gpu", {"0"}),
    ("roofline --point INTENSITY", ["roofline", profile, "-o", f"{work}/r.svg", "--point", "k:VALUE:1e12"], "--point",
     set()),
    ("roofline --point FLOPS", ["roofline", profile, "-o", f"{work}/r.svg", "--point", "k:1:VALUE"], "--point", set()),
    ("start --duration", ["start", "nosuchsession", "--duration", "VALUE"], "--duration", {"0"}),
    ("start --timeout", ["start", "nosuchsession", "--timeout", "VALUE"], "--timeout", set()),
    ("stop --timeout", ["stop", "nosuchsession", "--timeout", "VALUE"], "--timeout", set()),
    ("bench serve --timeout", ["bench", "serve", "--timeout", "VALUE"], "--timeout", set()),
    ("bench serve --first-byte-timeout", ["bench", "serve", "--first-byte-timeout", "VALUE"], "--first-byte-timeout",
     set()),
    ("bench serve --stall-timeout", ["bench", "serve", "--stall-timeout", "VALUE"], "--stall-timeout", set()),
    ("bench serve --progress", ["bench", "serve", "--progress", "VALUE"], "--progress", {"0"}),
]

fails, tried = 0, 0
for label, argv, option, accepted in CASES:
    for value in HOSTILE:
        args = [a.replace("VALUE", value) for a in argv]
        p = subprocess.run([gpuscope, *args], capture_output=True, text=True, cwd=work, timeout=120)
        tried += 1
        err = p.stderr
        sanitizer = "runtime error:" in err or "Sanitizer" in err
        refused_here = f"'{value}'" in err and option in err
        if value in accepted:
            ok = not refused_here and not sanitizer  # may still fail later (no GPU here), not on the value
        else:
            # Refused, naming the option and quoting the value, before any driver check.
            ok = p.returncode == 2 and refused_here and not sanitizer and "driver" not in err.lower()
        if not ok:
            fails += 1
            print(f"FAIL {label} {value}: exit {p.returncode}\n  {err.strip()[:400]}")
        for f in ("t.sqlite", "t.logs", "r.svg"):
            if os.path.exists(f"{work}/{f}"):
                subprocess.run(["rm", "-rf", f"{work}/{f}"])

# Every time option takes the same durations: the documented `gpuscope start srv --duration
# 10s` parses (and then fails for want of the session, not with 2); so do start/stop
# --timeout 500ms and bench serve's timeouts.
for argv in (["start", "nosuchsession", "--duration", "10s"], ["start", "nosuchsession", "--timeout", "500ms"],
             ["stop", "nosuchsession", "--timeout", "1.5"]):
    p = subprocess.run([gpuscope, *argv], capture_output=True, text=True, cwd=work, timeout=60)
    tried += 1
    if p.returncode in (0, 2) or "no session" not in p.stderr:
        fails += 1
        print(f"FAIL {' '.join(argv)}: exit {p.returncode}, not a parsed command failing for the session\n  {p.stderr.strip()[:300]}")

# A bad option exits 2 in every command (an option no command has, a value where none fits,
# a missing argument), with CLI11's message (a command missing its argument says that first);
# --help exits 0.
SUBCOMMANDS = ["trace", "launch", "start", "stop", "sessions", "export", "summary", "stats", "roofline", "bench",
               "peak", "kernels", "import", "diff", "report", "merge", "comm-summary", "schema"]
for sub in SUBCOMMANDS:
    for argv in ([sub, "--no-such-option"], [sub, "--help"]):
        p = subprocess.run([gpuscope, *argv], capture_output=True, text=True, cwd=work, timeout=60)
        tried += 1
        want = 0 if argv[-1] == "--help" else 2
        if p.returncode != want or (want == 2 and not p.stderr.strip()):
            fails += 1
            print(f"FAIL {' '.join(argv)}: exit {p.returncode}, expected {want}\n  {p.stderr.strip()[:300]}")
for argv in ([], ["no-such-command"], ["summary"]):  # no command, an unknown one, a missing argument
    p = subprocess.run([gpuscope, *argv], capture_output=True, text=True, cwd=work, timeout=60)
    tried += 1
    if p.returncode != 2:
        fails += 1
        print(f"FAIL gpuscope {' '.join(argv)}: exit {p.returncode}, expected 2")

# Every command that prints tables takes the two layout options (cli/table_flags.hpp).
for sub in ("summary", "stats", "diff", "bench", "kernels", "peak", "roofline"):
    h = subprocess.run([gpuscope, sub, "--help"], capture_output=True, text=True).stdout
    tried += 1
    if "--name-width" not in h or "--timeunit" not in h:
        fails += 1
        print(f"FAIL {sub} --help: no --name-width or --timeunit")
# roofline prints the profile with them: names cut to the width asked for, in every row.
p = subprocess.run([gpuscope, "roofline", profile, "-o", f"{work}/nw.svg", "-f", "--name-width", "10"],
                   capture_output=True, text=True)
wide = subprocess.run([gpuscope, "roofline", profile, "-o", f"{work}/nw.svg", "-f", "--name-width", "full"],
                      capture_output=True, text=True)
tried += 1
if p.returncode != 0 or wide.returncode != 0 or "…" not in p.stdout or p.stdout == wide.stdout:
    fails += 1
    print(f"FAIL roofline --name-width 10: exit {p.returncode}, no name cut\n{p.stdout[:400]}")

# Documented meanings: --top 0 lists every kernel name (the trace has 36).
p = subprocess.run([gpuscope, "summary", cnn, "--top", "0", "-r", "cuda_gpu_kern_sum", "--format", "csv"],
                   capture_output=True, text=True)
names = len(p.stdout.strip().splitlines()) - 1
p10 = subprocess.run([gpuscope, "summary", cnn, "-r", "cuda_gpu_kern_sum", "--format", "csv"], capture_output=True, text=True)
if not (names > 10 and len(p10.stdout.strip().splitlines()) - 1 == 10):
    fails += 1
    print(f"FAIL summary --top 0 lists {names} kernel names")

# --help states every range.
for cmd, needle in [("summary", "--top N [0 to 2147483647]"), ("trace", "DURATION [0s to 1000000s]"),
                    ("kernels", "[1 to 4096]"), ("bench", "--max-noise X [0 to 1]"), ("stats", "0 = all rows"),
                    ("start", "--duration DURATION [0s to 1000000s]"), ("stop", "--timeout DURATION"),
                    ("bench", "--first-byte-timeout DURATION"), ("bench", "--stall-timeout DURATION")]:
    h = subprocess.run([gpuscope, cmd, "--help"], capture_output=True, text=True).stdout
    if needle not in h:
        fails += 1
        print(f"FAIL {cmd} --help does not say {needle!r}")

print(f"{'ok  ' if fails == 0 else 'FAIL'} {tried} hostile option values tried, {fails} failures")
sys.exit(1 if fails else 0)
PY
