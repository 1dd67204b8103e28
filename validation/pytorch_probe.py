#!/usr/bin/env python3
"""What `gpuscope trace --pytorch=...` records on a PyTorch program: the NVTX ranges and
marks per kind (operators, backward operators, modules, steps), the most frequent messages,
and the threads they are on. Usage: pytorch_probe.py TRACE.sqlite [TOP]
"""
import collections
import sqlite3
import sys

db = sqlite3.connect(sys.argv[1])
top = int(sys.argv[2]) if len(sys.argv) > 2 else 40
rows = db.execute("SELECT e.tid, e.style, s.value, e.depth, e.end_ns - e.start_ns FROM nvtx_events e "
                  "LEFT JOIN strings s ON s.id = e.text_id").fetchall()
kinds = collections.Counter()
names = collections.Counter()
threads = collections.Counter()
examples = collections.defaultdict(list)
for tid, style, text, depth, dur in rows:
    text = text or ""
    kind = ("step" if text == "gpuscope.step" else "module" if text.startswith("nn.Module: ")
            else "backward" if "Backward" in text or text.startswith("autograd::") else
            "op" if "::" in text or ", seq = " in text else "other")
    kinds[(kind, style)] += 1
    threads[(tid, kind)] += 1
    names[text.split(", ")[0] if kind in ("op", "backward") else text] += 1
    if len(examples[kind]) < 8 and text not in examples[kind]:
        examples[kind].append(text[:240])
print("events per kind/style:", dict(kinds))
print("threads:", dict(threads))
for k, ex in examples.items():
    print(f"--- {k} examples"); [print("   ", e) for e in ex]
print(f"--- top {top} names")
for n, c in names.most_common(top):
    print(f"{c:8d}  {n[:160]}")
print("kernels:", db.execute("SELECT COUNT(*) FROM kernels").fetchone()[0],
      "api_calls:", db.execute("SELECT COUNT(*) FROM api_calls").fetchone()[0])
