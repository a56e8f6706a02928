"""Helpers shared by hwrt's Python test scripts (one copy; import it, do not copy it).

Scripts run by CTest without pytest (tests/smi, tests/prof, tests/install) count their
checks with check() and end with sys.exit(summary()): one "FAIL: what" line on stderr
per failed check, then "N passed, M failed", and a nonzero status on any failure. They
find this module with
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
The pytest files here (conftest.py puts this folder on sys.path) run child Pythons with
python_ok()."""
import glob
import os
import subprocess
import sys

passed = failed = 0


def check(cond, what):
    """Count one check; on failure print what failed."""
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, file=sys.stderr)
    return bool(cond)


def summary():
    """Print the counts; the exit status for them (1 on any failure, else 0)."""
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def python_ok(args, env=None, timeout=120):
    """Run this interpreter with args (and env, else ours); assert it exited 0, with its
    output in the assertion's message. Returns the CompletedProcess."""
    r = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def remove_registry(name):
    """Unlink the simulator's shared-memory registry a script named with
    HWRT_SIM_REGISTRY=name (/dev/shm/<name>-v<layout version>): the registry outlives the
    processes that used it, so a script that makes its own must remove it. Returns how
    many objects it removed."""
    gone = 0
    for path in glob.glob("/dev/shm/%s-v[0-9]*" % glob.escape(name)):
        try:
            os.unlink(path)
            gone += 1
        except FileNotFoundError:
            pass
    return gone
