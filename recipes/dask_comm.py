#!/usr/bin/env python3
"""gpuscope's many-GPU reports over a Dask cluster: one task per rank (or host) trace.

The reports nccl_sum, comm_overlap, rank_sum, stragglers and collective_trace split into a
map that reads ONE trace and writes a small summary (`gpuscope comm-summary`, a JSON document
of its ranks' steps and NCCL collectives: docs/multi-gpu.md) and a reduce over the summaries
(`gpuscope stats A.summary.json B.summary.json ...`). This recipe runs the map as one Dask
task per trace, on whichever worker Dask picks (the worker needs the gpuscope binary and the
trace at the same path: a shared file system), ships each summary back as text (tens of kB
per rank, not the trace), and runs the reduce as one more task. Nsight Systems' recipes use Dask
the same way.

Usage:
  dask_comm.py [--scheduler tcp://HOST:8786 | --local N] [--gpuscope PATH]
               [-r stragglers,rank_sum] [--format table|csv|json|markdown] [-o FILE]
               [--keep-summaries DIR] TRACE...

  # on one machine, 4 worker processes:
  python3 recipes/dask_comm.py --local 4 run.*.sqlite -r stragglers
  # on a cluster started with dask-scheduler / dask-worker:
  python3 recipes/dask_comm.py --scheduler tcp://head:8786 /shared/run/*.sqlite -r rank_sum

Needs Debian's python3-dask and python3-distributed (scripts/install-deps installs them).
The answers equal `gpuscope stats TRACE...` on one machine and `gpuscope stats` of the merged
trace (tests/unit/cli/test_dask_comm.sh checks it on a LocalCluster).
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def map_one(gpuscope, trace):
    """The map: `gpuscope comm-summary TRACE` on the worker; returns (name, summary text)."""
    with tempfile.TemporaryDirectory(prefix="gpuscope-map-") as tmp:
        out = os.path.join(tmp, "summary.json")
        subprocess.run([gpuscope, "comm-summary", trace, "-o", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with open(out, encoding="utf-8") as f:
            return os.path.basename(trace), f.read()


def reduce_all(gpuscope, reports, fmt, *summaries):
    """The reduce: `gpuscope stats` over every summary; returns the rendered reports."""
    with tempfile.TemporaryDirectory(prefix="gpuscope-reduce-") as tmp:
        paths = []
        for i, (name, text) in enumerate(summaries):
            path = os.path.join(tmp, "%06d.%s.summary.json" % (i, name))
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            paths.append(path)
        cmd = [gpuscope, "stats", *paths, "--format", fmt, "-j", "1"]
        if reports:
            cmd += ["-r", reports]
        done = subprocess.run(cmd, check=True, capture_output=True, text=True)
        return done.stdout


def find_gpuscope(given):
    if given:
        return os.path.abspath(given)
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (shutil.which("gpuscope"), os.path.join(here, "..", "build", "bin", "gpuscope")):
        if cand and os.path.exists(cand):
            return os.path.abspath(cand)
    sys.exit("dask_comm.py: no gpuscope binary: give --gpuscope PATH")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+", help="one trace per rank or per host (.sqlite)")
    where = ap.add_mutually_exclusive_group()
    where.add_argument("--scheduler", help="address of a running Dask scheduler")
    where.add_argument("--local", type=int, default=2, metavar="N",
                       help="start a LocalCluster of N worker processes (default 2)")
    ap.add_argument("--gpuscope", help="the gpuscope binary every worker runs")
    ap.add_argument("-r", "--report", default="", help="reports, comma-separated (default: all five)")
    ap.add_argument("--format", default="table", help="table, csv, json or markdown")
    ap.add_argument("-o", "--output", help="write the reports to FILE")
    ap.add_argument("--keep-summaries", metavar="DIR", help="also save every summary in DIR")
    a = ap.parse_args()

    from dask.distributed import Client, LocalCluster  # Debian: python3-distributed

    gpuscope = find_gpuscope(a.gpuscope)
    traces = [os.path.abspath(t) for t in a.traces]
    if a.scheduler:
        client = Client(a.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=a.local, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        summaries = client.map(map_one, [gpuscope] * len(traces), traces, pure=False)
        text = client.submit(reduce_all, gpuscope, a.report, a.format, *summaries, pure=False).result()
        if a.keep_summaries:
            os.makedirs(a.keep_summaries, exist_ok=True)
            for name, body in client.gather(summaries):
                stem = name[:-7] if name.endswith(".sqlite") else name
                with open(os.path.join(a.keep_summaries, stem + ".summary.json"), "w", encoding="utf-8") as f:
                    f.write(body)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
