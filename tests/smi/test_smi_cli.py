#!/usr/bin/python3
"""hwrt-smi's command line (issue 20 item 4): nvidia-smi's flag names and CSV conventions
(--query-gpu, --query-compute-apps, --format=csv,noheader,nounits, -i, -q, -l [SEC]),
--version and --help, `=` and a separate word for every value, JSON that parses (one
document per sample with -l: JSON Lines), exit codes 0 ok / 1 failure / 2 usage."""
import csv, io, json, os, subprocess, sys

SMI, HOLDER = sys.argv[1], sys.argv[2]
REG = "hwrt-smi-cli-%d" % os.getpid()
ENV = dict(os.environ, HWRT_SIM_REGISTRY=REG, HWRT_SIM_DEVICES="3", HWRT_SIM_MEMORY="4GB",
           HWRT_SIM_OVERHEAD="100MB")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, remove_registry, summary  # noqa: E402  (the shared helpers)


def smi(*args, timeout=30):
    return subprocess.run([SMI, "--sample-ms=0", *args], env=ENV, capture_output=True,
                          text=True, timeout=timeout)


p = subprocess.Popen([HOLDER, "1", "64"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     env=ENV, text=True)
line = p.stdout.readline().split()
try:
    check(line and line[0] == "ready", "holder started: %s" % line)
    pid = int(line[1])

    out = smi("--version")
    check(out.returncode == 0 and out.stdout.startswith("hwrt-smi (hwrt) "), "--version: %r" % out.stdout)
    out = smi("--help")
    check(out.returncode == 0 and "--query-gpu" in out.stdout and "exit status" in out.stdout,
          "--help lists the flags and the exit codes")

    # nvidia-smi CSV: ", " separated, units in the header, on values unless nounits
    out = smi("--query-gpu=index,name,memory.total,utilization.gpu", "--format=csv")
    rows = list(csv.reader(io.StringIO(out.stdout), skipinitialspace=True))
    check(out.returncode == 0 and rows[0] == ["index", "name", "memory.total [MiB]",
                                              "utilization.gpu [%]"], "header: %r" % rows[:1])
    check(len(rows) == 4 and rows[1][2] == "4096 MiB" and rows[1][3].endswith(" %"),
          "values with units: %r" % rows)
    out = smi("--query-gpu", "index,memory.total", "--format", "csv,noheader,nounits")
    check(out.returncode == 0 and out.stdout.splitlines() == ["0, 4096", "1, 4096", "2, 4096"],
          "noheader,nounits and values as separate words: %r" % out.stdout)
    out = smi("-i", "1", "--query-gpu=index,processes", "--format=csv,noheader")
    check(out.stdout.strip() == "1, 1", "-i 1 selects device 1: %r" % out.stdout)
    out = smi("--id=0,2", "--query-gpu=index", "--format=csv,noheader")
    check(out.stdout.split() == ["0,", "2"] or out.stdout.splitlines() == ["0", "2"],
          "--id=0,2: %r" % out.stdout)
    out = smi("--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits")
    got = [r for r in csv.reader(io.StringIO(out.stdout), skipinitialspace=True)]
    check(any(int(r[0]) == pid and float(r[2]) >= 164 for r in got), "compute apps: %r" % got)
    out = smi("-i", "0", "--query-compute-apps=pid", "--format=csv,noheader")
    check(str(pid) not in out.stdout.split(), "-i filters processes by device: %r" % out.stdout)

    # -q: the detailed listing
    out = smi("-q", "-i", "1")
    check(out.returncode == 0 and "Device 1" in out.stdout and "Device 0" not in out.stdout
          and "Process ID" in out.stdout and str(pid) in out.stdout, "-q: %r" % out.stdout[:400])

    # JSON, once and per sample (JSON Lines)
    out = smi("--json")
    doc = json.loads(out.stdout)
    check(len(doc["devices"]) == 3 and any(q["pid"] == pid for q in doc["processes"]), "json")
    out = smi("--json", "-l", "0.1", "--count=3")
    docs = [json.loads(l) for l in out.stdout.splitlines()]
    check(out.returncode == 0 and len(docs) == 3 and all(len(d["devices"]) == 3 for d in docs),
          "--json -l: one document per line: %r" % out.stdout[:300])
    out = smi("--query-gpu=index", "--format=csv,noheader", "-l0.1", "--count", "2")
    check(out.stdout.split() == ["0", "1", "2"] * 2, "-lSEC attached, --count N: %r" % out.stdout)

    # usage errors: 2, a sentence naming the flag; runtime failures: 1
    for args, frag in [(["--bogus"], "unknown option '--bogus'"), (["-x"], "unknown option '-x'"),
                       (["--query-gpu"], "needs a value"), (["-l", "0.01"], "-l '0.01'"),
                       (["--format=xml", "--query-gpu=index"], "'xml'"),
                       (["--count=2"], "--count needs -l"), (["-i", "x"], "-i 'x'"),
                       (["--json", "-q"], "choose one"), (["--json=1"], "takes no value"),
                       (["extra"], "unexpected argument 'extra'"),
                       (["--query-gpu=bogus", "--format=csv"], "bogus")]:
        out = smi(*args)
        check(out.returncode == 2 and frag in out.stderr, "usage %s -> 2 %r: %d %r" %
              (args, frag, out.returncode, out.stderr))
    out = smi("-i", "7", "--json")
    check(out.returncode == 1 and "no such device" in out.stderr, "-i 7: %d %r" %
          (out.returncode, out.stderr))
    out = subprocess.run([SMI, "--backend=nosuch"], env=ENV, capture_output=True, text=True)
    check(out.returncode == 1 and "nosuch" in out.stderr, "unknown backend: %d %r" %
          (out.returncode, out.stderr))
finally:
    p.stdin.close()
    p.wait(timeout=30)
    check(remove_registry(REG) == 1, "this script's registry %s was there to remove" % REG)

sys.exit(summary())
