#!/usr/bin/env python3
"""The PyTorch observer's calibration at exit (sitecustomize._record_observer_cost) records nothing into
the trace (no torch needed: a stand-in torch whose every operation, forward or backward, is a
RecordFunction call that the stand-in observer routes into the trace, into its scratch sink, or
nowhere, as gpuscope_torch_ops' callback does).

The calibration once warmed its CPU autograd graph with the callback still installed: the trace
then held the calibration's forward operators and backward nodes, so every `--pytorch=ops`
process looked like a training one (llm_sum found no generate loop) and op_sum held operators the
program never called. Checked here:
  - no call reaches the trace while the calibration runs;
  - the callback is installed again afterwards, in trace mode (the program's last calls after
    atexit still recorded);
  - the calibration counted the calls per graph pass its blocks ran (forward and backward).
"""
import importlib.util
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
SITE = os.path.normpath(os.path.join(HERE, "../../../src/collect/python/sitecustomize.py"))


class Observer:
    """gpuscope_torch_ops' Python API, as far as the calibration uses it, with its routing."""

    def __init__(self):
        self.installed = True  # as _enable_ops leaves it: the callback installed, writing into the trace
        self.scratch = False
        self.scratch_calls = 0
        self.trace = []
        self.costs = None

    def cost(self, op_ns, module_ns, method):
        self.costs = (op_ns, module_ns, method)

    def install_ops(self, shapes):
        self.installed = True

    def uninstall_ops(self):
        self.installed = False

    def scratch_mode(self, on):
        self.scratch = bool(on)

    def scratch_count(self):
        return 2 * self.scratch_calls  # a begin and an end per call

    def call(self, name):  # one RecordFunction call
        if not self.installed:
            return
        if self.scratch:
            self.scratch_calls += 1
        else:
            self.trace.append(name)


OBSERVER = Observer()


class Tensor:
    """Just enough of a tensor for (a * b + a).sum().backward(): each operation one call, and the
    backward pass one call per node of the graph it ran through."""

    def __init__(self, nodes=0):
        self.nodes = nodes  # backward nodes behind this tensor
        self.grad = None

    def _op(self, name, other=None):
        OBSERVER.call(name)
        return Tensor(self.nodes + 1 + (other.nodes if isinstance(other, Tensor) else 0))

    def __mul__(self, other):
        return self._op("aten::mul", other)

    def __add__(self, other):
        return self._op("aten::add", other)

    def sum(self):
        return self._op("aten::sum")

    def backward(self):
        for i in range(self.nodes):
            OBSERVER.call(f"autograd::engine::evaluate_function: Backward{i}")


class Torch:
    __version__ = "0.0+stand-in"

    @staticmethod
    def ones(n, requires_grad=False):
        OBSERVER.call("aten::ones")
        return Tensor()

    @staticmethod
    def full(shape, value):
        OBSERVER.call("aten::full")
        return Tensor()


def load_site():
    spec = importlib.util.spec_from_file_location("gpuscope_site_under_test", SITE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # under another name than sitecustomize: it only defines
    return module


class CalibrationRecordsNothing(unittest.TestCase):
    def test_calibration_leaves_the_trace_alone(self):
        site = load_site()
        OBSERVER.call("aten::linear")  # the program's own call before exit: it is recorded
        site._record_observer_cost(Torch(), OBSERVER, False, False)
        self.assertEqual(OBSERVER.trace, ["aten::linear"], "no calibration call may reach the trace")
        self.assertTrue(OBSERVER.installed, "the callback is installed again after the calibration")
        self.assertFalse(OBSERVER.scratch, "and writes into the trace again")
        ns, module_ns, method = OBSERVER.costs
        # (a * b + a).sum().backward(): mul, add, sum, then the 3 nodes behind the sum.
        self.assertIn("(6 RecordFunction calls, forward and backward)", method)
        self.assertGreaterEqual(ns, 0.0)
        self.assertGreater(OBSERVER.scratch_calls, 0, "the timed blocks ran through the scratch sink")
        OBSERVER.call("aten::relu")  # recorded after the calibration, as before it
        self.assertEqual(OBSERVER.trace, ["aten::linear", "aten::relu"])


if __name__ == "__main__":
    sys.exit(0 if unittest.main(exit=False).result.wasSuccessful() else 1)
