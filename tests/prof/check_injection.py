#!/usr/bin/python3
"""The profiler's files against hostile names (prof_inject.c): the raw file keeps one
record per line (no forged #pid header), hwrt-prof's exports are valid (trace.json and
report.html's data strict UTF-8 JSON, every CSV row RFC 4180 with the header's columns
and the real pid) and --analyze=op prints no control characters.
usage: check_injection.py HWRT_PROF PROF_INJECT OUTDIR"""
import csv, glob, io, json, os, re, shutil, subprocess, sys

TOOL, APP, OUT = sys.argv[1:4]
shutil.rmtree(OUT, ignore_errors=True)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, summary  # noqa: E402  (the shared helpers)


run = subprocess.run([APP, OUT], capture_output=True, text=True, timeout=120)
check(run.returncode == 0, "prof_inject ran: %s" % run.stderr)
pid = int(run.stdout.split()[1])
raw = open(glob.glob(os.path.join(OUT, "raw", "prof_*.tsv"))[0], "rb").read()
check(re.findall(rb"^#pid\t(\d+)$", raw, re.M) == [str(pid).encode()],
      "one #pid header, the real one: %r" % re.findall(rb"^#pid.*$", raw, re.M))
check(all(l[:1] in (b"#", b"W", b"S", b"M", b"X") for l in raw.splitlines() if l),
      "every raw line is a header or a record")
check(b"\x1b" not in raw, "no raw escape byte in the raw file")

exp = subprocess.run([TOOL, "--export=on", "--output=" + OUT], capture_output=True,
                     timeout=120)
check(exp.returncode == 0, "export: %r" % exp.stderr)

try:
    doc = json.loads(open(os.path.join(OUT, "trace.json"), "rb").read().decode("utf-8"))
    ev = doc["traceEvents"] if isinstance(doc, dict) else doc
    pids = {e.get("pid") for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"}
    check(42 not in pids and pid in pids, "trace.json processes: %s" % pids)
    tnames = [e["args"]["name"] for e in ev if e.get("name") == "thread_name"]
    check(any("\ufffd\x1b[2J\n#pid\t42" in n for n in tnames),
          "thread name kept (invalid byte replaced): %r" % tnames)
    users = [e["name"] for e in ev if e.get("ph") == "X" and e["name"].startswith("span")]
    check(users == ['span\tX\n1,"q"\x1b]0;t\x07\ufffd'], "user span name: %r" % users)
except (UnicodeDecodeError, ValueError, KeyError) as e:
    check(False, "trace.json is valid JSON: %s" % e)

for path in sorted(glob.glob(os.path.join(OUT, "*.csv"))):
    data = open(path, "rb").read()
    check(b"\x1b" not in data and b"\x07" not in data, "%s: no control bytes" % path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        check(False, "%s is valid UTF-8" % path)
        continue
    lines = text.splitlines()
    rows = list(csv.reader(io.StringIO(text)))
    check(len(rows) == len(lines), "%s: one record per line" % path)
    check(all(len(r) == len(rows[0]) for r in rows), "%s: every row has the header's %d "
          "columns: %r" % (path, len(rows[0]), [r for r in rows if len(r) != len(rows[0])]))
    if "Process ID" in rows[0]:
        k = rows[0].index("Process ID")
        check({r[k] for r in rows[1:]} == {str(pid)}, "%s: Process ID is %d: %r" %
              (path, pid, {r[k] for r in rows[1:]}))
off = list(csv.reader(open(os.path.join(OUT, "offload_summary.csv"), encoding="utf-8")))
check(any(r[1].startswith("span\ufffdX\ufffd1,\"q\"") for r in off[1:]),
      "user span in offload_summary.csv, quoted: %r" % off)

html = open(os.path.join(OUT, "report.html"), "rb").read()
check(b"\x1b" not in html and b"\xff" not in html, "report.html: no raw control or invalid bytes")
m = re.search(rb"const DATA = (\{.*?\});\n", html, re.S)
try:
    json.loads(m.group(1).decode("utf-8"))
    check(b"</" not in m.group(1), "report data cannot close the script element")
except (AttributeError, UnicodeDecodeError, ValueError) as e:
    check(False, "report.html's data is valid JSON: %s" % e)

ana = subprocess.run([TOOL, "--analyze=op", "--output=" + OUT], capture_output=True,
                     timeout=120)
check(ana.returncode == 0 and not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]", ana.stdout),
      "op table has no control characters: %r" % ana.stdout[-400:])

sys.exit(summary())
