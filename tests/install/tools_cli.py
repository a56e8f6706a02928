#!/usr/bin/python3
"""Every hwrt-* tool's command line (issue 20 items 4 and 7): --version and --help exit 0,
an unknown flag and a malformed value exit 2 with a sentence naming them, and every --json
output parses with Python's json (hwrt-bench all --json embeds each subcommand's own
document). Progress goes to stderr only, only on a terminal (HWRT_PROGRESS=1 stands in for
one here) and never with --quiet; stdout stays the results.
usage: tools_cli.py BINDIR TRACE"""
import json, os, re, subprocess, sys

BIN, TRACE = sys.argv[1], sys.argv[2]
REG = "hwrt-tools-cli-%d" % os.getpid()
ENV = dict(os.environ, HWRT_SIM_REGISTRY=REG)
ENV.pop("HWRT_PROGRESS", None)
# Open MPI's own allocations outlive the process: under ASan (build-asan) leak reports of
# hwrt-bench-dist (and of `all`, which runs it) would only report MPI, as the opencl suite
# says of PoCL. Every other tool keeps leak detection.
MPI_ENV = dict(ENV, ASAN_OPTIONS=(ENV.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, remove_registry, summary  # noqa: E402  (the shared helpers)


def run(*args, env=None, timeout=300):
    return subprocess.run(list(args), env=env or ENV, capture_output=True, text=True,
                          timeout=timeout)


tools = sorted(t for t in os.listdir(BIN) if t.startswith("hwrt-") and os.access(os.path.join(BIN, t), os.X_OK))
check({"hwrt-smi", "hwrt-prof", "hwrt-bench", "hwrt-bench-pool"} <= set(tools), "tools built: %s" % tools)
for t in tools:
    exe = os.path.join(BIN, t)
    out = run(exe, "--version")
    check(out.returncode == 0 and re.fullmatch(r"%s \(hwrt\) \d+\.\d+\.\d+\n" % re.escape(t), out.stdout),
          "%s --version: %d %r" % (t, out.returncode, out.stdout))
    out = run(exe, "--help")
    check(out.returncode == 0 and out.stdout.startswith("usage: ") and "exit status: 0 success, "
          "1 runtime failure, 2 usage error" in out.stdout, "%s --help: %d %r" % (t, out.returncode, out.stdout[-200:]))
    out = run(exe, "--no-such-flag")
    check(out.returncode == 2 and "unknown option '--no-such-flag'" in out.stderr and
          ("Try '%s --help'" % t) in out.stderr, "%s --no-such-flag: %d %r" % (t, out.returncode, out.stderr))

# malformed values name the flag and the value
for args, frag in [(["hwrt-bench", "copy", "--max-size=1K"], "--max-size '1K'"),
                   (["hwrt-bench", "copy", "--max-size"], "needs a value"),
                   (["hwrt-bench-pool", "--reps=x"], "--reps 'x'"),
                   (["hwrt-bench-pool", "--overhead", "lots"], "--overhead 'lots'"),
                   (["hwrt-bench-graph", "--reps", "2"], "--reps '2'"),
                   (["hwrt-bench-offload", "--host=maybe"], "--host 'maybe' is not one of: async, sync, both"),
                   (["hwrt-bench-prof", "--elems=64,x"], "--elems 'x'"),
                   (["hwrt-prof", "--export=maybe", "--output=x"], "--export 'maybe'"),
                   (["hwrt-prof", "--export=off", "--output=x"], "--export=off exports nothing"),
                   (["hwrt-prof", "--analyze=mem", "--output=x"], "--analyze 'mem'"),
                   (["hwrt-bench", "nosuch"], "unknown subcommand 'nosuch'")]:
    if not os.path.exists(os.path.join(BIN, args[0])):
        continue
    out = run(os.path.join(BIN, args[0]), *args[1:])
    check(out.returncode == 2 and frag in out.stderr, "%s: %d %r" % (args, out.returncode, out.stderr))

# runtime failures exit 1 with hwrt's sentence, not a C expression
out = run(os.path.join(BIN, "hwrt-bench"), "copy", "--backend=nosuch")
check(out.returncode == 1 and "selecting backend 'nosuch'" in out.stderr and "(" not in out.stderr.split(":")[1],
      "backend failure: %d %r" % (out.returncode, out.stderr))
out = run(os.path.join(BIN, "hwrt-bench-pool"), "--trace=/nonexistent.csv")
check(out.returncode == 1 and "/nonexistent.csv" in out.stderr, "missing trace: %d %r" % (out.returncode, out.stderr))

# hwrt-bench lists every subcommand built next to it
out = run(os.path.join(BIN, "hwrt-bench"), "--help")
for t in tools:
    if t.startswith("hwrt-bench-"):
        check(re.search(r"^  %s\s" % re.escape(t[11:]), out.stdout, re.M), "hwrt-bench --help lists %s" % t)

# hwrt-bench all --json: one document, every subcommand in it, none failed; progress on
# the (pretend) terminal's stderr, none with --quiet
out = run(os.path.join(BIN, "hwrt-bench"), "all", "--json", "--quick", "--max-size=64K",
          env=dict(MPI_ENV, HWRT_PROGRESS="1"), timeout=600)
try:
    doc = json.loads(out.stdout)
except ValueError as e:
    doc = {}
    check(False, "hwrt-bench all --json is not JSON (%s): %r" % (e, out.stdout[:300]))
subs = [t[11:] for t in tools if t.startswith("hwrt-bench-")]
check(out.returncode == 0 and doc.get("failed") == [], "all: rc %d, failed %r, stderr %r" %
      (out.returncode, doc.get("failed"), out.stderr[-500:]))
for k in ["copy", "launch"] + subs:
    check(isinstance(doc.get(k), dict), "all --json has %s: %r" % (k, str(doc.get(k))[:100]))
# (text mode reads the progress line's \r as a newline; the erase code shows it)
check("hwrt-bench: all 8/8" in out.stderr and "\033[K" in out.stderr, "progress on stderr: %r" % out.stderr[-300:])
check("\033" not in out.stdout and "hwrt-bench: all" not in out.stdout, "no progress in stdout")
out = run(os.path.join(BIN, "hwrt-bench"), "launch", "--quick", "--quiet", env=dict(ENV, HWRT_PROGRESS="1"))
check(out.returncode == 0 and "\033" not in out.stderr, "--quiet: no progress: %r" % out.stderr)
out = run(os.path.join(BIN, "hwrt-bench"), "launch", "--quick", "--json")
check(out.returncode == 0 and "\033" not in out.stderr, "stderr not a terminal: no progress: %r" % out.stderr)
json.loads(out.stdout)

# every sibling's own --json, alone
for t in subs:
    out = run(os.path.join(BIN, "hwrt-bench-" + t), "--json", "--quick", timeout=600,
              env=MPI_ENV if t == "dist" else None)
    try:
        json.loads(out.stdout)
        ok = out.returncode == 0
    except ValueError:
        ok = False
    check(ok, "hwrt-bench-%s --json --quick: %d %r %r" % (t, out.returncode, out.stdout[:200], out.stderr[-300:]))

# --min-capacity: a progress line per trial on a terminal, valid JSON with a path that
# needs escaping
weird = os.path.join(os.environ.get("TMPDIR", "/tmp"), 'tr"ace %d.csv' % os.getpid())
with open(TRACE) as src, open(weird, "w") as dst:
    dst.write(src.read())
try:
    out = run(os.path.join(BIN, "hwrt-bench-pool"), "--min-capacity", weird, "--json",
              env=dict(ENV, HWRT_PROGRESS="1"), timeout=600)
    doc = json.loads(out.stdout)
    check(out.returncode == 0 and doc["trace"] == weird, "min-capacity JSON: %r" % out.stdout[:200])
    check("min-capacity: trial" in out.stderr and "trying" in out.stderr, "min-capacity progress: %r" % out.stderr[-200:])
    out = run(os.path.join(BIN, "hwrt-bench-pool"), "--trace", weird, "--json")
    check(out.returncode == 0 and json.loads(out.stdout)["trace"] == weird, "--trace JSON escapes the path")
finally:
    os.unlink(weird)
remove_registry(REG)        # what the tools' sim sessions left (none of them may have made one)

sys.exit(summary())
