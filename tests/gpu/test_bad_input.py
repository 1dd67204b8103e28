#!/usr/bin/env python3
"""GPU test: gpuscope trace refuses bad input clearly.

Pass when: tracing a command that does not exist exits 127 with "not found" in its output
(for an absolute path and for a name searched on PATH), and tracing into an existing
NAME.sqlite without --force-overwrite exits non-zero with a message and leaves the file's
bytes and mtime untouched.
"""
import os

import gputest as g


def main():
    args = g.parse_args(__doc__.splitlines()[0])
    g.require_gpu()
    c = g.Checks("bad input")
    gs = g.gpuscope_bin(args.build)

    for missing in ("/nonexistent/gpuscope_no_such_cmd", "gpuscope_no_such_cmd_xyz"):
        r = g.run([gs, "trace", "-o", args.scratch / "missing", "--force-overwrite", "--", missing], timeout=60)
        c.equal(f"exit code for missing command {missing}", 127, r.returncode)
        c.check("not found" in (r.stdout + r.stderr).lower(), "message contains 'not found'")

    existing = args.scratch / "existing.sqlite"
    existing.write_bytes(b"sentinel: gpuscope must not overwrite this\n")
    os.utime(existing, (1_000_000_000, 1_000_000_000))
    before = (existing.read_bytes(), existing.stat().st_mtime_ns)
    r = g.run([gs, "trace", "-o", args.scratch / "existing", "--", "/bin/true"], timeout=60)
    c.check(r.returncode != 0, "existing output without --force-overwrite: non-zero exit", f"exit {r.returncode}")
    message = (r.stdout + r.stderr).strip()
    c.check(bool(message), "prints a message", message[-200:])
    after = (existing.read_bytes(), existing.stat().st_mtime_ns)
    c.equal("existing file untouched (bytes, mtime_ns)", before, after)
    c.finish()


if __name__ == "__main__":
    main()
