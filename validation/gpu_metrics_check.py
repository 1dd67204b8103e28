#!/usr/bin/env python3
"""Check `gpuscope trace --gpu-metrics` against what the traced kernels must show.

Reads the sampler's own event log (NAME.logs/gpu-metrics-*.gslog, kept with --keep-logs:
format in src/core/event_log_format.hpp) and the trace's kernels (NAME.sqlite), so it checks
the sampler independently of gpuscope's importer and reports.

For each kernel name given with --kernel REGEX (or every kernel of at least --min-us):
the samples that lie entirely inside its executions, and their mean of each metric; DRAM
bytes as the bytes metric summed over those samples, scaled to the kernel's time (GB/s =
bytes / sampled time). Also the clock check: the offset between the samples' and the
kernels' clocks that best explains "GR active" (the GPU has work) against "a kernel runs",
searched over +-1 ms.

Usage: gpu_metrics_check.py NAME.sqlite NAME.logs [--kernel REGEX ...] [--json OUT]
"""
import argparse
import bisect
import glob
import json
import math
import os
import re
import sqlite3
import struct
import sys

SESSION = struct.Struct("<QQQQ16sqQII")
SAMPLE = struct.Struct("<QQII")


def read_sampler_log(path):
    """Returns (sessions, samples): sessions {device: {...}}, samples {device: [(start, end, [values])]}."""
    data = open(path, "rb").read()
    magic, version, header_size, pid, _ = struct.unpack_from("<8sIIII", data, 0)
    if magic != b"GSCOPELG":
        raise SystemExit(f"{path}: not a gpuscope event log")
    off = header_size
    strings, sessions, samples, messages = {}, {}, {}, []
    while off + 8 <= len(data):
        kind, _flags, size = struct.unpack_from("<HHI", data, off)
        off += 8
        if off + size > len(data):
            break
        p = data[off:off + size]
        off += size
        if kind == 1:
            (sid,) = struct.unpack_from("<Q", p, 0)
            strings[sid] = p[8:].decode("utf-8", "replace")
        elif kind == 21:
            s = SESSION.unpack_from(p, 0)
            n = s[8]
            ids = struct.unpack_from("<%dQ" % n, p, SESSION.size)
            sessions[s[7]] = {
                "start": s[0], "interval_ns": s[1], "chip": strings.get(s[2], ""), "name": strings.get(s[3], ""),
                "clock_offset_ns": s[5], "metrics": [strings.get(i, "?") for i in ids],
            }
        elif kind == 22:
            start, end, dev, count = SAMPLE.unpack_from(p, 0)
            vals = struct.unpack_from("<%dd" % count, p, SAMPLE.size)
            samples.setdefault(dev, []).append((start, end, vals))
        elif kind == 17:
            ts, text_id, sev = struct.unpack_from("<QQB", p, 0)
            messages.append(strings.get(text_id, "?"))
        elif kind == 14:
            ts, count, what, _, _ = struct.unpack_from("<QQQII", p, 0)
            messages.append(f"data loss {strings.get(what, '?')} x{count}")
    return sessions, samples, messages


def kernels(db_path):
    con = sqlite3.connect(db_path)
    rows = con.execute(
        "SELECT k.device_id, k.start_ns, k.end_ns, s.value FROM kernels k JOIN strings s ON s.id = k.short_name_id "
        "ORDER BY k.start_ns").fetchall()
    con.close()
    return rows


def merged_busy(rows, device):
    spans = []
    for d, s, e, _ in rows:
        if d != device:
            continue
        if spans and s <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], e)
        else:
            spans.append([s, e])
    return spans


def busy_fraction(spans, starts, s, e):
    """Fraction of [s, e) covered by the merged spans."""
    if e <= s:
        return 0.0
    i = max(bisect.bisect_right(starts, s) - 1, 0)
    covered = 0
    while i < len(spans) and spans[i][0] < e:
        a, b = max(spans[i][0], s), min(spans[i][1], e)
        if b > a:
            covered += b - a
        i += 1
    return covered / (e - s)


def best_offset(spans, samples, gr_index):
    """Offset (ns, added to the samples) minimizing mean |GR active - busy fraction|."""
    starts = [a for a, _ in spans]
    pick = samples[:: max(1, len(samples) // 4000)]
    best = None
    for off in range(-1_000_000, 1_000_001, 20_000):
        err = 0.0
        for s, e, v in pick:
            g = v[gr_index]
            if g != g:
                continue
            err += abs(g / 100.0 - busy_fraction(spans, starts, s + off, e + off))
        err /= max(len(pick), 1)
        if best is None or err < best[1]:
            best = (off, err)
    return best


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("logs")
    ap.add_argument("--kernel", action="append", default=[], help="regex on the kernel's base name")
    ap.add_argument("--min-us", type=float, default=200.0)
    ap.add_argument("--json")
    a = ap.parse_args()
    logs = glob.glob(os.path.join(a.logs, "gpu-metrics-*.gslog"))
    if not logs:
        raise SystemExit(f"no gpu-metrics-*.gslog in {a.logs} (trace with --gpu-metrics --keep-logs)")
    sessions, samples, messages = read_sampler_log(logs[0])
    rows = kernels(a.db)
    out = {"messages": messages, "devices": {}}
    for dev, sess in sessions.items():
        sm = samples.get(dev, [])
        names = sess["metrics"]
        print(f"device {dev} ({sess['name']}, {sess['chip']}): {len(sm)} samples every {sess['interval_ns']} ns; "
              f"metrics: {len(names)}")
        if not sm:
            continue
        durs = sorted(e - s for s, e, _ in sm)
        print(f"  sample length: median {durs[len(durs) // 2]} ns, min {durs[0]}, max {durs[-1]}; "
              f"first sample {sm[0][0] - sess['start']:+d} ns from the sampling start")
        gaps = [b[0] - a[1] for a, b in zip(sm, sm[1:]) if b[0] - a[1] > sess["interval_ns"] // 2]
        span = sm[-1][1] - sm[0][0]
        print(f"  gaps between samples: {len(gaps)}, {sum(gaps) / 1e6:.3f} ms of {span / 1e6:.3f} ms "
              f"({100 * sum(gaps) / max(span, 1):.1f} %); largest {max(gaps, default=0) / 1e6:.3f} ms")
        kdev = [r for r in rows if r[0] == dev] or rows
        spans = merged_busy(kdev, kdev[0][0]) if kdev else []
        gr = names.index("gr__cycles_active.avg.pct_of_peak_sustained_elapsed") if \
            "gr__cycles_active.avg.pct_of_peak_sustained_elapsed" in names else None
        dev_out = {"samples": len(sm), "metrics": names, "kernels": {}}
        if spans and gr is not None:
            off, err = best_offset(spans, sm, gr)
            print(f"  clock: GR active fits the kernels best with the samples shifted {off / 1000:+.0f} us "
                  f"(mean |GR active - busy| {err:.3f}); at 0: {best_offset_at(spans, sm, gr, 0):.3f}")
            dev_out["best_offset_ns"] = off
        # Per kernel name: samples entirely inside one execution.
        by_name = {}
        for d, s, e, n in kdev:
            if (e - s) < a.min_us * 1000:
                continue
            if a.kernel and not any(re.search(k, n) for k in a.kernel):
                continue
            by_name.setdefault(n, []).append((s, e))
        starts = [s for s, _, _ in sm]
        for n, execs in by_name.items():
            inside, ktime = [], 0
            for s, e in execs:
                ktime += e - s
                i = bisect.bisect_left(starts, s)
                while i < len(sm) and sm[i][1] <= e:
                    inside.append(sm[i])
                    i += 1
            if not inside:
                continue
            st = sum(e - s for s, e, _ in inside)
            means = {}
            for j, m in enumerate(names):
                vals = [(v[j], e - s) for s, e, v in inside if v[j] == v[j]]
                if not vals:
                    continue
                if m.endswith(".sum"):
                    means[m] = sum(x for x, _ in vals) / st  # bytes per ns = GB/s
                else:
                    means[m] = sum(x * w for x, w in vals) / sum(w for _, w in vals)
            dram = means.get("dram__bytes_read.sum", 0) + means.get("dram__bytes_write.sum", 0)
            rec = {"executions": len(execs), "kernel_ns": ktime, "samples_inside": len(inside), "sampled_ns": st,
                   "means": means, "dram_gbps": dram, "dram_bytes_est": dram * ktime / len(execs)}
            dev_out["kernels"][n] = rec
            short = {k.split(".")[-3] if k.count(".") >= 3 else k: v for k, v in means.items()}
            print(f"  {n[:60]:60s} x{len(execs)} {ktime / 1e6:9.3f} ms, {len(inside)} samples: "
                  f"SM active {means.get('sm__cycles_active.avg.pct_of_peak_sustained_elapsed', float('nan')):.1f} %, "
                  f"tensor {means.get('sm__pipe_tensor_cycles_active_realtime.avg.pct_of_peak_sustained_elapsed', float('nan')):.1f} %, "
                  f"warps {means.get('sm__warps_active.avg.pct_of_peak_sustained_elapsed', float('nan')):.1f} %, "
                  f"DRAM {dram:.1f} GB/s (read {means.get('dram__bytes_read.sum', 0):.1f}), "
                  f"bytes/execution {dram * ktime / len(execs):.4g}")
        out["devices"][str(dev)] = dev_out
    for m in messages:
        print("  message:", m)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


def best_offset_at(spans, samples, gr_index, off):
    starts = [a for a, _ in spans]
    pick = samples[:: max(1, len(samples) // 4000)]
    err = sum(abs(v[gr_index] / 100.0 - busy_fraction(spans, starts, s + off, e + off)) for s, e, v in pick
              if v[gr_index] == v[gr_index])
    return err / max(len(pick), 1)


if __name__ == "__main__":
    main()
