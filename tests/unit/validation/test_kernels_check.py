#!/usr/bin/env python3
"""CPU tests of validation/kernels_check.py (no GPU): ncu CSV parsing on output recorded on the
GPU machine (H100, ncu 2025.3.1), kernel-name normalisation, launch matching, judging with
the floors, medians over rounds, hand-computed checks, FLOP calibration, and one end-to-end
run of the script against fake gpuscope / ncu / kernel_mix programs (pass and fail cases).
Usage: python3 test_kernels_check.py (exit 0 when all pass)."""
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import textwrap
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(REPO / "validation"))
import kernels_check as kc  # noqa: E402

# Recorded: ncu --metrics <hw group> --csv --print-units base --clock-control none
# --cache-control none kernel_mix --only own (first lines of each launch kept).
NCU_REAL = textwrap.dedent('''\
    ==WARNING== Note: Running with uncontrolled GPU caches. Profiling results may be inconsistent.
    ==PROF== Connected to process 522 (/work/main/build-bench/probe/kernel_mix)
    EXPECT kernel=copy_f4 launches=1 n=268435456 dram_bytes=2147483648 dram_read_bytes=1073741824
    LAUNCH index=0 kernel=evict_l2
    ==PROF== Disconnected from process 522
    "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
    "0","522","kernel_mix","127.0.0.1","evict_l2(const float4 *, long long, float *)","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","267,843,584"
    "0","522","kernel_mix","127.0.0.1","evict_l2(const float4 *, long long, float *)","1","7","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","97,472"
    "1","522","kernel_mix","127.0.0.1","copy_f4(const float4 *, float4 *, long long)","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","1,073,781,248"
    "1","522","kernel_mix","127.0.0.1","copy_f4(const float4 *, float4 *, long long)","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","byte","1,051,059,200"
    "1","522","kernel_mix","127.0.0.1","copy_f4(const float4 *, float4 *, long long)","1","7","(256, 1, 1)","(262144, 1, 1)","0","9.0","Command line profiler metrics","sm__warps_active.avg.pct_of_peak_sustained_active","%","78.69"
    "2","646","kernel_mix","127.0.0.1","nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT","1","7","(384, 1, 1)","(2, 66, 1)","0","9.0","Command line profiler metrics","sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum","","137,438,953,472"
    "3","960","gpuscope","127.0.0.1","unnamed>::copy_vec(const uint4 *, uint4 *, long, const unsigned char *, unsigned char *, int)","1","13","(256, 1, 1)","(1056, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","ns","48,480"
    ''')


class PureFunctions(unittest.TestCase):
    def test_parse_real_ncu_csv(self):
        launches = kc.parse_ncu_csv(NCU_REAL)
        self.assertEqual([l["id"] for l in launches], [0, 1, 2, 3])
        self.assertEqual([l["name"] for l in launches],
                         ["evict_l2", "copy_f4", "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT", "copy_vec"])
        copy = launches[1]["metrics"]
        self.assertEqual(copy["dram__bytes_read.sum"], 1073781248.0)
        self.assertEqual(copy["dram__bytes_write.sum"], 1051059200.0)
        self.assertAlmostEqual(copy["sm__warps_active.avg.pct_of_peak_sustained_active"], 78.69)
        self.assertEqual(launches[1]["units"]["dram__bytes_read.sum"], "byte")
        self.assertEqual(launches[2]["metrics"]["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"], 137438953472.0)
        self.assertEqual(kc.parse_ncu_csv("==PROF== nothing profiled\n"), [])

    def test_parse_number(self):
        self.assertEqual(kc.parse_number("1,024"), 1024.0)
        self.assertIsNone(kc.parse_number("n/a"))
        self.assertIsNone(kc.parse_number(None))

    def test_normalize_name(self):
        cases = {
            "copy_f4(const float4 *, float4 *, long long)": "copy_f4",
            "copy_f4": "copy_f4",
            "void gpuscope::bench::ops::(anonymous namespace)::binary_vec<float, Add>(const float *, int)": "binary_vec",
            "unnamed>::copy_vec(const uint4 *, uint4 *, long)": "copy_vec",
            "transpose_shared<float>": "transpose_shared",
            "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "at::detail::Array<char *, 1>>(int, at::native::FillFunctor<float>, at::detail::Array<char *, 1>)":
                "vectorized_elementwise_kernel",
            "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT": "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coopA_NNT",
        }
        for name, want in cases.items():
            self.assertEqual(kc.normalize_name(name), want, name)

    def test_metric_kind(self):
        self.assertEqual(kc.metric_kind("gpu__time_duration.sum"), "duration")
        self.assertEqual(kc.metric_kind("sm__warps_active.avg.pct_of_peak_sustained_active"), "percent")
        self.assertEqual(kc.metric_kind("dram__bytes_read.sum"), "bytes")
        self.assertEqual(kc.metric_kind("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"), "conflicts")
        self.assertEqual(kc.metric_kind("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), "count")
        self.assertEqual(kc.metric_kind("smsp__warps_eligible.avg.per_cycle_active"), "average")
        self.assertEqual(kc.metric_kind("l1tex__t_sector_hit_rate.pct"), "percent")
        # cycles per issued instruction: a rate (3 %), not a count (1 %)
        self.assertEqual(kc.metric_kind("smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio"), "average")

    def test_match_launches(self):
        gs = [{"name": n, "metrics": {}} for n in ["a", "b", "a", "c"]]
        ncu = [{"name": n, "metrics": {}} for n in ["a", "a", "b", "d"]]
        pairs, only_gs, only_ncu = kc.match_launches(gs, ncu)
        self.assertEqual([p[0] for p in pairs], ["a#0", "b#0", "a#1"])
        self.assertIs(pairs[2][1], gs[2])
        self.assertIs(pairs[2][2], ncu[1])
        self.assertEqual(only_gs, ["c#0"])
        self.assertEqual(only_ncu, ["d#0"])

    def test_judge(self):
        self.assertEqual(kc.judge("dram__bytes_read.sum", 1010.0e6, 1000.0e6)["result"], "PASS")   # 1 %
        self.assertEqual(kc.judge("dram__bytes_read.sum", 1020.0e6, 1000.0e6)["result"], "FAIL")   # 2 %
        self.assertEqual(kc.judge("dram__bytes_read.sum", 900e3, 100e3)["result"], "PASS")         # under 1 MiB
        self.assertEqual(kc.judge("sm__inst_executed.sum", 10, 9)["result"], "FAIL")               # no floor
        self.assertEqual(kc.judge("sm__inst_executed.sum", 0, 0)["result"], "PASS")
        self.assertEqual(kc.judge("gpu__time_duration.sum", 2600, 2450)["result"], "PASS")         # 150 ns < 0.2 us
        self.assertEqual(kc.judge("gpu__time_duration.sum", 103000, 100000)["result"], "PASS")     # 3 %
        self.assertEqual(kc.judge("gpu__time_duration.sum", 104000, 100000)["result"], "FAIL")
        self.assertEqual(kc.judge("x.pct_of_peak_sustained_active", 1.9, 1.56)["result"], "PASS")  # 0.34 points
        self.assertEqual(kc.judge("x.pct_of_peak_sustained_active", 80, 60)["result"], "FAIL")
        j = kc.judge("sm__inst_executed.sum", 103, 100, noise=4.0)                                 # within noise
        self.assertEqual((j["result"], j["basis"]), ("PASS", "noise"))
        self.assertEqual(kc.judge("sm__inst_executed.sum", 105, 100, noise=4.0)["result"], "FAIL")
        self.assertEqual(kc.judge("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", 20072, 16000)["result"],
                         "PASS")                                                                    # 5,000 floor
        j = kc.judge("dram__bytes_read.sum", None, 5)
        self.assertEqual(j["result"], "MISSING")
        self.assertAlmostEqual(kc.judge("sm__inst_executed.sum", 101, 100)["diff_pct"], 1.0)

    def test_combine_rounds(self):
        r1 = [{"name": "a", "metrics": {"m": 1.0}}, {"name": "a", "metrics": {"m": 10.0}}]
        r2 = [{"name": "a", "metrics": {"m": 3.0}}, {"name": "a", "metrics": {"m": None}}]
        r3 = [{"name": "a", "metrics": {"m": 2.0}}]
        out = kc.combine_rounds([r1, r2, r3])
        self.assertEqual([l["metrics"]["m"] for l in out], [2.0, 10.0])
        self.assertEqual([l["rounds"] for l in out], [3, 2])
        self.assertEqual([l["spread"]["m"] for l in out], [2.0, 0.0])
        self.assertEqual(kc.combine_rounds([]), [])

    def test_hand_checks_and_calibration(self):
        expect = kc.parse_expect("EXPECT kernel=copy_f4 launches=1 dram_bytes=2000 dram_read_bytes=1000 "
                                 "global_ld_inst=10 global_st_inst=10 flops=0\n"
                                 "EXPECT kernel=fma_loop launches=1 ffma=100 flops=200 global_ld_inst=5\n"
                                 "EXPECT kernel=gemm_bf16 launches=1 flops=7 cublas=1\n")
        self.assertEqual(expect["fma_loop"]["flops"], 200)
        gs = {"copy_f4": {"dram__bytes_read.sum": 1000.0, "dram__bytes_write.sum": 970.0,
                          "smsp__sass_inst_executed_op_global_ld.sum": 10.0,
                          "smsp__sass_inst_executed_op_global_st.sum": 10.0},
              "fma_loop": {kc.FFMA: 100.0, "smsp__sass_inst_executed_op_global_ld.sum": 6.0}}
        rows = {r["check"]: r for r in kc.hand_checks(expect, gs, {})}
        self.assertEqual(rows["copy_f4: dram__bytes_read.sum + dram__bytes_write.sum = 2*4*N"]["result"], "PASS")
        self.assertEqual(rows["copy_f4: dram__bytes_read.sum = 4*N"]["result"], "info")
        self.assertEqual(rows["fma_loop: 2 x sass_thread_inst_executed_op_ffma_pred_on.sum = FLOPs"]["result"], "PASS")
        self.assertEqual(rows["fma_loop: smsp__sass_inst_executed_op_global_ld.sum = global_ld_inst"]["result"], "FAIL")
        self.assertFalse(any(k.startswith("gemm") for k in rows))
        # Recorded on H100 (ncu): the conflicted transpose's extra wavefronts are 31 per warp load
        # within 0.4 %, while each count alone is a few % above the instructions issued.
        expect = kc.parse_expect(
            "EXPECT kernel=transpose_bank_conflicts launches=1 n=4096 shared_ld_wavefronts=16777216 "
            "shared_st_wavefronts=524288 shared_ld_bank_conflicts=16252928\n"
            "EXPECT kernel=transpose_padded launches=1 n=4096 shared_ld_wavefronts=524288 "
            "shared_st_wavefronts=524288 shared_ld_bank_conflicts=0\n")
        wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
        measured = {"transpose_bank_conflicts": {wf: 16861526.0}, "transpose_padded": {wf: 544360.0}}
        rows = {r["check"]: r for r in kc.hand_checks(expect, measured, measured)}
        extra = rows["transpose_bank_conflicts - transpose_padded: shared ld wavefronts = 31 per warp load"]
        self.assertEqual((extra["expected"], extra["gpuscope"], extra["result"]), (16252928, 16317166.0, "PASS"))
        self.assertEqual(rows[f"transpose_padded: {wf} = shared_ld_wavefronts"]["result"], "info")
        shapes = [{"shape": "a", "flops": 100, "sums": {m: 100.0 for m in kc.TENSOR.values()}},
                  {"shape": "b", "flops": 200, "sums": {**{m: 200.0 for m in kc.TENSOR.values()},
                                                        kc.TENSOR["tf32"]: 210.0}}]
        cal = {r["dtype"]: r for r in kc.calibration(shapes)}
        self.assertEqual(cal["bf16"]["factors"], [1.0, 1.0])
        self.assertEqual(cal["bf16"]["result"], "PASS")
        self.assertEqual(cal["tf32"]["result"], "FAIL")
        shapes[0]["sums"].pop(kc.TENSOR["f16"])
        self.assertEqual({r["dtype"]: r for r in kc.calibration(shapes)}["f16"]["result"], "FAIL")

    def test_markdown_table(self):
        table = kc.markdown_table(["a", "b"], [("x|y", 1)])
        self.assertEqual(table, "| a | b |\n|---|---|\n| x\\|y | 1 |\n")


# ---- end to end against fakes -----------------------------------------------------------------

FAKE_COMMON = r'''
import re, sys
OWN = ["evict_l2", "copy_f4", "fma_loop", "dfma_loop", "hfma2_loop", "transpose_bank_conflicts",
       "transpose_padded", "tiny"]
GEMM = ["nvjet_bf16", "nvjet_f16", "xmma_tf32"]
def launches(prog):
    """Kernel names a fake program launches, in order."""
    a = " ".join(prog)
    if "--launches" in a:
        return ["copy_f4", "tiny"] * 100
    if "bench copy" in a:
        return ["flush_read", "copy_vec"] * 8
    if "bench transpose" in a:
        return ["flush_read", "transpose_shared"] * 8
    if "--only gemm" in a:
        return GEMM
    if "--only transpose" in a:
        return ["transpose_bank_conflicts", "transpose_padded"]
    return OWN
def value(name, metric, k, prog=()):
    if "tensor_op_hgmma" in metric:
        dtype = {"nvjet_bf16": "bf16", "nvjet_f16": "fp16", "xmma_tf32": "tf32"}.get(name)
        if dtype is None or dtype not in metric:
            return 0.0
        m = re.search(r"--gemm (\d+)x(\d+)x(\d+)", " ".join(prog))
        return 2.0 * (int(m[1]) * int(m[2]) * int(m[3]) if m else 4096 ** 3)
    return float(1000003000 * (sum(map(ord, name)) % 97 + 1) + 7919 * (sum(map(ord, metric)) % 89) + k)
'''

# fake_kernels_db.py beside the fakes: the part of gpuscope kernels' trace that the validation
# scripts read (kernel_profiles, kernel_metrics, v_kernel_metrics); test_kernels_speed uses it too.
FAKE_KERNELS_DB = r'''
import os, sqlite3
def new_kernels_db(path):
    """A new database at path (replacing one there) with the kernel profile tables."""
    if os.path.exists(path):
        os.remove(path)
    con = sqlite3.connect(path)
    con.executescript("""
CREATE TABLE strings (id INTEGER PRIMARY KEY, value TEXT UNIQUE);
CREATE TABLE kernel_profiles (id INTEGER PRIMARY KEY, pid INTEGER, launch_index INTEGER, name_id INTEGER,
  short_name_id INTEGER, grid_x INTEGER DEFAULT 4, grid_y INTEGER DEFAULT 1, grid_z INTEGER DEFAULT 1,
  block_x INTEGER DEFAULT 256, block_y INTEGER DEFAULT 1, block_z INTEGER DEFAULT 1, registers_per_thread INTEGER,
  static_shared_memory INTEGER, dynamic_shared_memory INTEGER DEFAULT 0, passes INTEGER DEFAULT 1);
CREATE TABLE kernel_metrics (profile_id INTEGER, metric_id INTEGER, value REAL);
CREATE VIEW v_kernel_metrics AS SELECT m.profile_id, p.pid, p.launch_index, s.value AS metric, m.value
  FROM kernel_metrics m JOIN kernel_profiles p ON p.id = m.profile_id JOIN strings s ON s.id = m.metric_id;
""")
    return con
'''

FAKE_KERNEL_MIX = r'''#!/usr/bin/env python3
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import OWN, value
v = lambda n, m: value(n, m, 0)
for n in OWN[1:]:
    e = {"global_ld_inst": v(n, "smsp__sass_inst_executed_op_global_ld.sum"),
         "global_st_inst": v(n, "smsp__sass_inst_executed_op_global_st.sum")}
    if n == "copy_f4":
        e["dram_bytes"] = v(n, "dram__bytes_read.sum") + v(n, "dram__bytes_write.sum")
        e["dram_read_bytes"] = v(n, "dram__bytes_read.sum")
    if n == "fma_loop":
        e["flops"] = 2 * v(n, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")
    if n == "dfma_loop":
        e["flops"] = 2 * v(n, "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum")
    if n == "hfma2_loop":
        e["hfma2"] = v(n, "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum")
    if n.startswith("transpose"):
        e["shared_ld_wavefronts"] = v(n, "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum")
    print("EXPECT kernel=%s launches=1 %s" % (n, " ".join("%s=%d" % kv for kv in e.items())))
print("RESULT mode=mix ok=1")
'''

# FAKE_SETS (JSON {set: [metric, ...]}) gives the sets of --set and --list-sets (kernel_sets_check's
# test); FAKE_GS_FAIL makes `kernels` fail as a profiler that cannot start.
FAKE_GPUSCOPE = r'''#!/usr/bin/env python3
import csv, json, os, re, sqlite3, subprocess, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import launches, value
from fake_kernels_db import new_kernels_db
args = sys.argv[1:]
if args[0] == "bench":
    sys.exit(0)
assert args[0] == "kernels", args
SETS = json.loads(os.environ.get("FAKE_SETS", "{}"))
if "--list-sets" in args:
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["section", "Metric"])
    for s, ms in SETS.items():
        for m in ms:
            w.writerow(["metric_set_" + s, m])
    sys.exit(0)
if os.environ.get("FAKE_GS_FAIL"):
    print("gpuscope kernels: cuptiProfilerInitialize failed", file=sys.stderr)
    sys.exit(1)
dash = args.index("--")
opts, prog = args[1:dash], args[dash + 1:]
def opt(name, default=None):
    return opts[opts.index(name) + 1] if name in opts else default
if "--metrics" in opts:
    metrics = opt("--metrics").split(",")
else:
    metrics = SETS.get(opt("--set"), ["gpu__time_duration.sum", "dram__bytes_read.sum"])
kfilter, count = opt("-k"), int(opt("--launch-count", "0"))
db = opt("-o") + ".sqlite"
con = new_kernels_db(db)
def sid(text):
    con.execute("INSERT OR IGNORE INTO strings (value) VALUES (?)", (text,))
    return con.execute("SELECT id FROM strings WHERE value = ?", (text,)).fetchone()[0]
seen, profiled = {}, 0
for index, name in enumerate(launches(prog)):
    k = seen.get(name, 0)
    seen[name] = k + 1
    if kfilter and not re.search(kfilter, name):
        continue
    if count and profiled >= count:
        continue
    profiled += 1
    cur = con.execute("INSERT INTO kernel_profiles (pid, launch_index, name_id, short_name_id) VALUES (1, ?, ?, ?)",
                      (index, sid(name + "(int)"), sid(name)))
    for m in metrics:
        v = value(name, m, k, prog) * float(os.environ.get("FAKE_SCALE_" + m.split(".")[0], "1"))
        con.execute("INSERT INTO kernel_metrics VALUES (?, ?, ?)", (cur.lastrowid, sid(m), v))
con.commit()
print("gpuscope kernels: %d metrics on GH100: 1 replay pass(es) per profiled kernel" % len(metrics), file=sys.stderr)
if opt("--format") == "csv":  # the results file, one row per profiled launch with its verdict
    expl = {"fma_loop": "compute-bound; busiest pipe FMA", "copy_f4": "DRAM-bound; long scoreboard"}
    with open(opt("-o") + ".csv", "w") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["Name", "Explanation"])
        for (n,) in con.execute("SELECT s.value FROM kernel_profiles p JOIN strings s ON s.id = p.short_name_id "
                                "ORDER BY p.id"):
            w.writerow([n, expl.get(n, "")])
out = subprocess.run(prog, capture_output=True, text=True).stdout if "kernel_mix" in prog[0] else ""
sys.stdout.write(out)
'''

FAKE_NCU = r'''#!/usr/bin/env python3
import csv, os, re, subprocess, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fake_common import launches, value
args = sys.argv[1:]
if args[0] == "--query-metrics":  # every base name a fake program reports
    print("Device gh100\n----")
    for b in os.environ.get("FAKE_NCU_KNOWN", "").split(","):
        print(b + "   Counter   a description")
    sys.exit(0)
metrics, kfilter, count, i = [], None, 0, 0
while i < len(args) and args[i].startswith("--"):
    flag = args[i]
    if flag == "--metrics":
        metrics = args[i + 1].split(",")
    elif flag == "--kernel-name":
        kfilter = args[i + 1].removeprefix("regex:")
    elif flag == "--launch-count":
        count = int(args[i + 1])
    i += 1 if flag == "--csv" else 2
prog = args[i:]
if "--launches" in prog:
    # ncu is slow: the speed target (ncu / gpuscope >= 10) holds for the fakes with a wide margin,
    # also when a loaded machine slows the fake gpuscope's Python start-up (3 s gave 9.9x under load).
    time.sleep(8.0)
print("==PROF== Connected to process 1")
if "kernel_mix" in prog[0]:
    sys.stdout.write(subprocess.run(prog, capture_output=True, text=True).stdout)
w = csv.writer(sys.stdout, quoting=csv.QUOTE_ALL, lineterminator="\n")
w.writerow(["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
            "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit", "Metric Value"])
seen, rid = {}, 0
for name in launches(prog):
    k = seen.get(name, 0)
    seen[name] = k + 1
    if kfilter and not re.search(kfilter, name):
        continue
    if count and rid >= count:
        continue
    for m in sorted(metrics):
        w.writerow([rid, 1, "p", "h", name, 1, 7, "(256, 1, 1)", "(1, 1, 1)", 0, "9.0", "Command line profiler metrics",
                    m, "byte", "{:,}".format(value(name, m, k, prog))])
    rid += 1
'''


class EndToEnd(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="kernels-check-test-"))
        bin_dir = self.tmp / "build" / "bin"
        bin_dir.mkdir(parents=True)
        (bin_dir / "fake_common.py").write_text(FAKE_COMMON)
        (bin_dir / "fake_kernels_db.py").write_text(FAKE_KERNELS_DB)
        for name, text in (("kernel_mix", FAKE_KERNEL_MIX), ("gpuscope", FAKE_GPUSCOPE), ("ncu", FAKE_NCU)):
            path = bin_dir / name
            path.write_text(text)
            path.chmod(path.stat().st_mode | stat.S_IXUSR)
        self.bin = bin_dir

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_check(self, out, env=None):
        cmd = [sys.executable, str(REPO / "validation" / "kernels_check.py"), "--build", str(self.tmp / "build"),
               "--out", str(out), "--rounds", "1", "--ncu", str(self.bin / "ncu"), "--timeout", "60",
               # The fakes' wall times are not what is tested: a loaded CI machine slows the fake
               # gpuscope's start-up (8 s of fake ncu gave 9.7x), so the speed part is judged on a
               # target it meets with room; the ratio's arithmetic and its report still run.
               "--speed-target", "2"]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=dict(os.environ, **(env or {})))

    def test_pass_then_fail(self):
        r = self.run_check(self.tmp / "ok")
        report = (self.tmp / "ok" / "kernels_compare.md").read_text()
        self.assertEqual(r.returncode, 0, report + r.stderr[-3000:])
        self.assertIn("Overall: PASS", report)
        self.assertIn("ncu / gpuscope =", report)
        self.assertTrue((self.tmp / "ok" / "kernels_compare.json").exists())
        self.assertIn("| copy_f4: dram__bytes_read.sum + dram__bytes_write.sum = 2*4*N |", report)
        # gpuscope's DRAM read bytes 5 % high: the counter rows and the hand check fail.
        r = self.run_check(self.tmp / "bad", env={"FAKE_SCALE_dram__bytes_read": "1.05"})
        report = (self.tmp / "bad" / "kernels_compare.md").read_text()
        self.assertEqual(r.returncode, 1, report)
        self.assertIn("Overall: FAIL", report)
        row = next((l for l in report.splitlines() if l.startswith("| kernel_mix own | hw | copy_f4#0 | dram__bytes_read.sum |")), "")
        self.assertTrue(row.endswith("| +5.00 % | 0 | FAIL |"), row)
        self.assertIn("| copy_f4: dram__bytes_read.sum + dram__bytes_write.sum = 2*4*N |", report)
        row = next((l for l in report.splitlines() if l.startswith("| hand-computed counts |")), "")
        self.assertIn("FAIL", row)


if __name__ == "__main__":
    unittest.main(verbosity=2)
