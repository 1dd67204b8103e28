#!/usr/bin/env python3
"""CPU tests of validation/multigpu_check.py (the `multigpu` step of scripts/gpu-run), no GPU:
its own interval arithmetic and NCCL kernel names, then the whole analysis (--analyze-only)
over the synthetic traces of validation/multigpu_synthetic.py: every check passes on the
'pass' variant, and the 'fail' variant fails exactly the checks it breaks.
Usage: python3 test_multigpu_check.py BUILD (BUILD/bin holds gpuscope and gpuscope_make_trace;
exit 0 when all pass)."""
import json
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(REPO / "validation"))
import multigpu_check as m  # noqa: E402

BUILD = None


class Arithmetic(unittest.TestCase):
    def test_union_and_intersection(self):
        u = m.union([(5, 7), (0, 2), (1, 3), (7, 8), (10, 10)])
        self.assertEqual(u, [[0, 3], [5, 8]])
        self.assertEqual(m.length(u), 6)
        self.assertEqual(m.clip(u, 2, 6), [(2, 3), (5, 6)])
        self.assertEqual(m.intersection_length(u, m.union([(2, 6)])), 2)
        self.assertEqual(m.intersection_length([], u), 0)

    def test_nccl_names(self):
        for name in ("ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                     "void ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)",
                     "ncclDevKernel_Generic_1", "_Z29ncclDevKernel_SendRecv_RING_LLv"):
            self.assertTrue(m.is_nccl_kernel(name), name)
        for name in ("void at::native::vectorized_elementwise_kernel<4>(int)", "ncclMemcpy", "", None):
            self.assertFalse(m.is_nccl_kernel(name), name)

    def test_result_lines(self):
        self.assertEqual(m.result_lines("x\nRESULT rank=1 pid=7\nRESULTS no\n"), [{"rank": "1", "pid": "7"}])


class Synthetic(unittest.TestCase):
    def run_variant(self, variant):
        tmp = Path(tempfile.mkdtemp(prefix="multigpu-check-"))
        out = tmp / "check"
        subprocess.run([sys.executable, "-B", REPO / "validation" / "multigpu_synthetic.py", "--make-trace",
                        BUILD / "bin" / "gpuscope_make_trace", "--out", out, "--variant", variant], check=True,
                       capture_output=True)
        r = subprocess.run([sys.executable, "-B", REPO / "validation" / "multigpu_check.py", "--build", BUILD, "--out",
                            out, "--analyze-only"], capture_output=True, text=True)
        doc = json.loads(Path(f"{out}.json").read_text())
        self.assertTrue(Path(f"{out}.md").read_text().startswith("# gpuscope on 2 GPUs"))
        return r.returncode, {c["key"]: c for c in doc["checks"]}

    def test_pass(self):
        code, checks = self.run_variant("pass")
        self.assertEqual(code, 0, [c["what"] for k in checks.values() for c in k["checks"] if not c["pass"]])
        self.assertEqual(sorted(checks), ["a", "b", "c", "d"])

    def test_fail(self):
        code, checks = self.run_variant("fail")
        self.assertEqual(code, 1)
        failed = {k: [c["what"] for c in v["checks"] if not c["pass"]] for k, v in checks.items()}
        self.assertEqual(failed["a"], ["rank 1: kernel counts by name over steps 10-14 = torch.profiler's"])
        self.assertEqual(failed["b"], ["rank 1's Last From Step = 5 (the first delayed step)"])
        self.assertEqual(failed["c"], [])  # the arithmetic still agrees
        self.assertEqual(len(failed["d"]), 5)  # every size 11 % off


if __name__ == "__main__":
    BUILD = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 else REPO / "build"
    unittest.main()
