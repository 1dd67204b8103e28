#!/usr/bin/env python3
"""gpuscope launch --session's private state against a second local user.

The victim is this process's user (root in CI); the other user is gpuscope-test-other,
created here when absent (useradd, no home) and run with setpriv. Both share a sticky,
world-writable folder as XDG_RUNTIME_DIR, as they would share /tmp. One check group per
attack that worked before the session folders were made private (store/private_dir.hpp):

  1. a sessions folder made by the other user (mode 0777, or a symbolic link) before the
     victim's launch: launch refuses, naming the folder, the owner and mode, and the fix;
  2. the other user reads the victim's 'info' or swaps in their own, pointing the output at
     the victim's old.w1.sqlite and the logs at their own: the system refuses the read and
     the write; an info file of the other user's found in the folder makes stop refuse;
  3. symbolic links planted as control.tmp.PID (gpuscope's old temporary names) or as
     'control': start/stop --no-trace never write through them;
  4. a 'control' of the other user's ("9 start": recording, window 5): the system refuses
     the write; one found in the folder is not shown as the session's state, start refuses;
  5. `bench serve --session`'s requests-PID.jsonl in a log folder the other user can write,
     with links planted under every likely PID: the file is created, never followed;
  6. the other user's start/stop/sessions aimed at the victim's folder say "permission
     denied" with the path (not "no session"); without a folder of their own, "no session".

After each attack no file of the victim has changed. Skips (exit 77) when not root: running
as a second user needs setuid. Usage: test_session_security.py BUILD_DIR SOURCE_DIR
"""
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

OTHER = "gpuscope-test-other"
failures = []


def check(cond, what, detail=""):
    print(("ok   " if cond else "FAIL ") + what + ("" if cond or not detail else f"\n     {detail.strip()[-600:]}"))
    if not cond:
        failures.append(what)


def other_user():
    try:
        return pwd.getpwnam(OTHER)
    except KeyError:
        pass
    p = subprocess.run(["useradd", "-M", "-r", "-s", "/usr/sbin/nologin", OTHER], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"SKIP: cannot create the user {OTHER} (useradd: {p.stderr.strip()})")
        sys.exit(77)
    return pwd.getpwnam(OTHER)


class Env:
    def __init__(self, build, src, work, other):
        self.bin = os.path.join(build, "bin", "gpuscope")
        self.src = src
        self.work = work
        self.other = other
        self.root = os.path.join(work, f"gpuscope-sessions-{os.geteuid()}")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSCOPE_")}
        self.env.update(XDG_RUNTIME_DIR=work, GPUSCOPE_SKIP_DRIVER_CHECK="1")

    def as_other(self, argv, env=None, **kw):
        e = dict(self.env, HOME="/", USER=OTHER, LOGNAME=OTHER, **(env or {}))
        return subprocess.run(["setpriv", f"--reuid={self.other.pw_uid}", f"--regid={self.other.pw_gid}",
                               "--clear-groups", "--", *argv], env=e, capture_output=True, text=True, timeout=60, **kw)

    def other_py(self, code, *args):
        return self.as_other([sys.executable, "-c", code, *args])

    def gpuscope(self, *argv, env=None):
        p = subprocess.run([self.bin, *argv], env=dict(self.env, **(env or {})), capture_output=True, text=True,
                           timeout=120)
        print(f"  $ gpuscope {' '.join(argv)} -> exit {p.returncode}\n    " + p.stderr.strip().replace("\n", "\n    "))
        return p


def snapshot(folder):
    """The victim's own files (the top of `folder`; the running session's log folder aside)."""
    files = {}
    for n in os.listdir(folder):
        p = os.path.join(folder, n)
        st = os.lstat(p)
        if not stat.S_ISDIR(st.st_mode):
            files[p] = (stat.S_IMODE(st.st_mode), st.st_uid, open(p, "rb").read() if stat.S_ISREG(st.st_mode) else
                        os.readlink(p))
    return files


def plant_links(folder, names, target, uid, gid):
    """Links left in `folder` by the other user (made here as root, then given to them)."""
    for n in names:
        p = os.path.join(folder, n)
        os.symlink(target, p)
        os.lchown(p, uid, gid)


def next_pids(count):
    with open("/proc/sys/kernel/ns_last_pid") as f:
        last = int(f.read())
    return range(last + 1, last + 1 + count)


def wait_for(path, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    if os.geteuid() != 0:
        print(f"SKIP: running as a second local user ({OTHER}) needs root (CI runs as root)")
        return 77
    if shutil.which("setpriv") is None:
        print("SKIP: setpriv (util-linux) not found")
        return 77
    other = other_user()
    work = tempfile.mkdtemp(prefix="gpuscope-secure-")
    os.chmod(work, 0o1777)  # shared like /tmp
    e = Env(build, src, work, other)
    victim = os.path.join(work, "victim")
    os.mkdir(victim, 0o755)
    with open(os.path.join(victim, "old.w1.sqlite"), "wb") as f:
        f.write(b"the victim's trace of yesterday\n")
    with open(os.path.join(victim, "secret.txt"), "wb") as f:
        f.write(b"the victim's own file\n")
    before = snapshot(victim)
    ouid, ogid = other.pw_uid, other.pw_gid
    if e.as_other([e.bin, "--version"]).returncode != 0:  # the build folder may be closed to others
        shutil.copy(e.bin, os.path.join(work, "gpuscope"))
        os.chmod(os.path.join(work, "gpuscope"), 0o755)
        e.other_bin = os.path.join(work, "gpuscope")
    else:
        e.other_bin = e.bin
    launcher = None
    mock = None
    try:
        # ---- 1. a sessions folder made by the other user
        print("1. a sessions folder made by another user")
        p = e.other_py("import os,sys; os.mkdir(sys.argv[1]); os.chmod(sys.argv[1], 0o777)", e.root)
        check(p.returncode == 0, "the other user makes the victim's sessions folder, mode 0777", p.stderr)
        r = e.gpuscope("launch", "--session", "s", "-o", os.path.join(victim, "run"), "--", "true")
        check(r.returncode != 0 and f"directory {e.root} has unsafe permissions (owner {ouid}, mode 0777)" in r.stderr
              and "remove it, or set XDG_RUNTIME_DIR" in r.stderr, "launch refuses it: folder, owner, mode, fix",
              r.stderr)
        check(os.listdir(e.root) == [] and not os.path.exists(os.path.join(victim, "run.sqlite")),
              "nothing was written into it, no trace made")
        shutil.rmtree(e.root)
        mine = os.path.join(work, "other-sessions")
        p = e.other_py("import os,sys; os.mkdir(sys.argv[1], 0o700); os.symlink(sys.argv[1], sys.argv[2])", mine,
                       e.root)
        check(p.returncode == 0, "the other user links the victim's sessions folder to a folder of theirs", p.stderr)
        r = e.gpuscope("launch", "--session", "s", "-o", os.path.join(victim, "run"), "--", "true")
        check(r.returncode != 0 and f"directory {e.root} is a symbolic link" in r.stderr,
              "launch refuses a linked sessions folder", r.stderr)
        check(os.listdir(mine) == [], "nothing was written through the link")
        os.unlink(e.root)
        check(snapshot(victim) == before, "no file of the victim changed (1)")

        # The victim's own session, for the attacks below.
        launcher = subprocess.Popen([e.bin, "launch", "--session", "s", "-o", os.path.join(victim, "run"), "--",
                                     "sleep", "120"], env=e.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    start_new_session=True)
        sdir = os.path.join(e.root, "s")
        info = os.path.join(sdir, "info")
        if not wait_for(info):
            launcher.kill()
            check(False, "the victim's launch --session writes its info", launcher.communicate()[1].decode())
            return 1
        time.sleep(0.2)
        modes = [stat.S_IMODE(os.lstat(p).st_mode) for p in (e.root, sdir, info)]
        check(modes == [0o700, 0o700, 0o600], f"the sessions folder and the session are 0700, info 0600 ({modes})")
        before = snapshot(victim)
        r = e.gpuscope("sessions")
        check(r.returncode == 0 and "not recording" in r.stdout, "the victim's sessions lists the session", r.stdout)

        # ---- 2. info read or swapped
        print("2. the victim's info read or swapped")
        p = e.as_other(["cat", info])
        check(p.returncode != 0 and "Permission denied" in p.stderr, "the other user cannot read the info", p.stderr)
        p = e.other_py("open(__import__('sys').argv[1], 'w').write('launcher_pid=1\\n')", info)
        check(p.returncode != 0, "the other user cannot replace the info", p.stderr)
        genuine = open(info, "rb").read()
        logs = os.path.join(work, "other-logs")
        os.mkdir(logs)
        shutil.copy(os.path.join(src, "tests", "data", "cnn.logs", "vm-499.gslog"), logs)
        os.chown(logs, ouid, ogid)
        os.unlink(info)
        with open(info, "w") as f:
            f.write(f"name=s\nlauncher_pid={launcher.pid}\noutput={victim}/old.sqlite\nlog_dir={logs}\ncommand=x\n")
        os.chown(info, ouid, ogid)
        r = e.gpuscope("stop", "s", "--timeout", "0.2")
        check(r.returncode == 1 and f"{info} belongs to another user (owner {ouid}" in r.stderr,
              "stop refuses an info file of another user, naming it", r.stderr)
        check(snapshot(victim) == before, "old.w1.sqlite and every file of the victim unchanged (2)")
        os.unlink(info)
        with open(info, "wb") as f:
            f.write(genuine)
        os.chmod(info, 0o600)

        # ---- 3. links planted as temporary or control files
        print("3. links planted as control.tmp.PID and as control")
        p = e.other_py("import os,sys; os.symlink(sys.argv[1], sys.argv[2])", os.path.join(victim, "secret.txt"),
                       os.path.join(sdir, "control.tmp.1"))
        check(p.returncode != 0 and "Permission denied" in p.stderr, "the other user cannot plant a link there",
              p.stderr)
        secret = os.path.join(victim, "secret.txt")
        planted = [f"control.tmp.{pid}" for pid in next_pids(3000)]
        plant_links(sdir, planted, secret, ouid, ogid)
        r1 = e.gpuscope("start", "s", "--timeout", "0.2")
        r2 = e.gpuscope("stop", "s", "--no-trace", "--timeout", "0.2")
        check(r1.returncode == 0 and r2.returncode == 0, "start and stop --no-trace work beside the links",
              r1.stderr + r2.stderr)
        control = os.path.join(sdir, "control")
        st = os.lstat(control)
        check(stat.S_ISREG(st.st_mode) and st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o600 and
              open(control).read() == "2 stop\n", "control is the victim's own 0600 file, '2 stop'")
        check(snapshot(victim) == before, "secret.txt and every file of the victim unchanged (3)")
        for n in planted:
            os.unlink(os.path.join(sdir, n))
        os.unlink(control)
        plant_links(sdir, ["control"], secret, ouid, ogid)
        r = e.gpuscope("start", "s", "--timeout", "0.2")
        check(r.returncode == 1 and f"{control} is a symbolic link" in r.stderr, "start refuses a linked control",
              r.stderr)
        check(snapshot(victim) == before, "no file of the victim changed through control")
        os.unlink(control)

        # ---- 4. control written by the other user
        print("4. a control file of another user")
        p = e.other_py("open(__import__('sys').argv[1], 'w').write('9 start\\n')", control)
        check(p.returncode != 0, "the other user cannot write control", p.stderr)
        with open(control, "w") as f:
            f.write("9 start\n")
        os.chown(control, ouid, ogid)
        r = e.gpuscope("sessions")
        row = [line for line in r.stdout.splitlines() if line.lstrip().startswith("s ")]
        check(r.returncode == 0 and row and "not recording" in row[0] and f"belongs to another user" in r.stderr,
              "sessions does not show it as the session's state (not 'recording, window 5') and says why",
              r.stdout + r.stderr)
        r = e.gpuscope("start", "s", "--timeout", "0.2")
        check(r.returncode == 1 and f"{control} belongs to another user (owner {ouid}" in r.stderr,
              "start refuses it, naming the file", r.stderr)
        check(open(control).read() == "9 start\n" and os.lstat(control).st_uid == ouid, "and leaves it as it was")
        os.unlink(control)
        check(snapshot(victim) == before, "no file of the victim changed (4)")

        # ---- 5. bench serve --session's requests-PID.jsonl in a log folder others can write
        print("5. requests-PID.jsonl beside links planted by the other user")
        run_logs = os.path.join(victim, "run.logs")
        os.chmod(run_logs, 0o1777)
        port_file = os.path.join(work, "port")
        mock = subprocess.Popen([sys.executable, os.path.join(src, "tests", "serve", "mock_server.py"),
                                 "--port-file", port_file, "--ttft-ms", "1", "--tpot-ms", "1"])
        if wait_for(port_file, 20):
            time.sleep(0.1)
            pids = next_pids(3000)
            p = e.other_py("import os,sys\nfor n in range(int(sys.argv[3]), int(sys.argv[4])):\n"
                           "    os.symlink(sys.argv[1], os.path.join(sys.argv[2], f'requests-{n}.jsonl'))",
                           secret, run_logs, str(pids.start), str(pids.stop))
            check(p.returncode == 0, "the other user plants 3000 links requests-PID.jsonl -> secret.txt", p.stderr)
            url = "http://127.0.0.1:" + open(port_file).read().strip()
            r = e.gpuscope("bench", "serve", "--url", url, "--input-len", "4", "--output-len", "2", "--num-requests",
                           "2", "--warmup", "0", "--session", "s")
            mine = [n for n in os.listdir(run_logs) if n.startswith("requests-") and
                    not os.path.islink(os.path.join(run_logs, n))]
            check(r.returncode == 0 and len(mine) == 1, f"bench serve --session writes its requests file ({mine})",
                  r.stderr)
            if mine:
                st = os.lstat(os.path.join(run_logs, mine[0]))
                check(st.st_uid == 0 and stat.S_IMODE(st.st_mode) == 0o600, "a regular 0600 file of the victim")
                print(f"     (its pid {'was' if int(mine[0][9:-6]) in pids else 'was not'} among the planted names)")
            check(open(secret, "rb").read() == before[secret][2], "secret.txt unchanged (5)")
            for n in os.listdir(run_logs):
                if n.startswith("requests-"):
                    os.unlink(os.path.join(run_logs, n))
        else:
            check(False, "the mock server started")
        os.chmod(run_logs, 0o755)

        # ---- 6. the other user's commands aimed at the victim's sessions
        print("6. the other user's start, stop and sessions")
        theirs = {"GPUSCOPE_SESSIONS_DIR": e.root}
        for argv in (["start", "s"], ["stop", "s"], ["sessions"]):
            p = e.as_other([e.other_bin, *argv], env=theirs)
            print(f"  $ (as {OTHER}) gpuscope {' '.join(argv)} -> exit {p.returncode}\n    {p.stderr.strip()}")
            check(p.returncode == 1 and "permission denied" in p.stderr and e.root in p.stderr and
                  "no session" not in p.stderr, f"{argv[0]}: 'permission denied' with the path, not 'no session'")
        p = e.as_other([e.other_bin, "start", "s"])
        own = os.path.join(work, f"gpuscope-sessions-{ouid}")
        check(p.returncode == 1 and f"no session 's' (looked in {own})" in p.stderr,
              "without a folder of their own: 'no session', in their own folder", p.stderr)
        check(not os.path.exists(os.path.join(sdir, "control")), "the victim's session got no command")
        check(snapshot(victim) == before, "no file of the victim changed (6)")
    finally:
        for proc in (launcher, mock):
            if proc is not None and proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL) if proc is launcher else proc.kill()
                except ProcessLookupError:
                    pass
                proc.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"{len(failures)} failed" if failures else "all session security checks passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
