#!/usr/bin/python3
"""hwrt-smi against forged registry entries (another process of the user can write any
bytes into its slot): a process name with a newline, terminal escapes, a comma, a quote
and invalid UTF-8 cannot forge rows in the CSV, reach the terminal raw or make the JSON
invalid; figures whose parts exceed their total are refused, and --explain never prints
an underflowed size."""
import csv, json, mmap, os, subprocess, sys

SMI, HOLDER = sys.argv[1], sys.argv[2]
REG = "hwrt-smi-inject-%d" % os.getpid()
ENV = dict(os.environ, HWRT_SIM_REGISTRY=REG, HWRT_SIM_DEVICES="1", HWRT_SIM_MEMORY="4GB",
           HWRT_SIM_OVERHEAD="100MB")
# reg_file and reg_slot of src/backends/sim/sim_registry_layout.h (layout version 3)
VERSION, HDR, SLOT = 3, 16, 136
PID, DEVICE, NAME, USED, OVERHEAD, CHECK = 8, 12, 32, 64, 72, 128
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from checklib import check, summary  # noqa: E402  (the shared helpers)


def smi(*args):
    return subprocess.run([SMI, "--sample-ms", "0", *args], env=ENV, capture_output=True,
                          timeout=30)


def fnv(data, pid):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & (2**64 - 1)
    return h ^ pid


def forge(m, off, pid, name=None, overhead=None):
    """Rewrite the slot at off the way its owner would (valid checksum)."""
    if name is not None:
        m[off + NAME:off + NAME + 32] = name.ljust(32, b"\0")
    if overhead is not None:
        m[off + OVERHEAD:off + OVERHEAD + 8] = overhead.to_bytes(8, "little")
    m[off + CHECK:off + CHECK + 8] = fnv(m[off + DEVICE:off + CHECK], pid).to_bytes(8, "little")


EVIL = b'ev"il\n4242, 0, 9 MiB\x1b[2J\xff\xfe,x'
assert len(EVIL) < 32
p = None
try:
    p = subprocess.Popen([HOLDER, "0", "64"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         env=ENV, text=True)
    line = p.stdout.readline().split()
    check(line[:1] == ["ready"], "holder started: %s" % line)
    pid = int(line[1])
    f = open("/dev/shm/%s-v%d" % (REG, VERSION), "r+b")
    m = mmap.mmap(f.fileno(), 0)
    off = next(HDR + i * SLOT for i in range(256)
               if int.from_bytes(m[HDR + i * SLOT + PID:HDR + i * SLOT + PID + 4], "little") == pid)
    forge(m, off, pid, name=EVIL)

    # terminal table: no escape byte, no invalid UTF-8, the entry on one line
    out = smi()
    check(out.returncode == 0, "table runs: %r" % out.stderr)
    check(b"\x1b" not in out.stdout, "no escape code reaches the terminal")
    try:
        text = out.stdout.decode("utf-8")
    except UnicodeDecodeError:
        text = ""
        check(False, "table is valid UTF-8: %r" % out.stdout)
    rows = [l for l in text.splitlines() if 'ev"il' in l]
    check(len(rows) == 1 and str(pid) in rows[0], "one table row for the process: %r" % rows)
    check(not any(l.lstrip().startswith("4242") for l in text.splitlines()), "no forged row")

    # CSV: one record per process, each with the columns asked for
    out = smi("--query-processes=pid,name,used_memory", "--format=csv,noheader,nounits")
    lines = out.stdout.decode("utf-8").splitlines()
    check(len(lines) == 1, "one CSV line per process: %r" % lines)
    recs = list(csv.reader(lines, skipinitialspace=True))
    check(len(recs) == 1 and len(recs[0]) == 3 and recs[0][0] == str(pid),
          "RFC 4180 record with 3 fields and the real pid: %r" % recs)
    check(b"\x1b" not in out.stdout and b"\xff" not in out.stdout, "CSV has no raw controls")
    check(recs and recs[0][1].startswith('ev"il'), "quote kept inside the quoted field: %r" % recs)

    # JSON: valid (strict UTF-8), the name kept with its newline, the bytes replaced
    out = smi("--json")
    try:
        doc = json.loads(out.stdout.decode("utf-8"))
        names = [q["name"] for q in doc["processes"] if q["pid"] == pid]
        check(names and names[0].startswith('ev"il\n4242') and "\ufffd" in names[0]
              and "\x1b[2J" in names[0], "JSON name: %r" % names)
    except (UnicodeDecodeError, ValueError) as e:
        check(False, "JSON is valid: %s: %r" % (e, out.stdout))

    # figures whose parts exceed the total: refused, and --explain shows no underflow
    used = int.from_bytes(m[off + USED:off + USED + 8], "little")
    forge(m, off, pid, name=b"forged", overhead=used + (4 << 20))
    out = smi("--explain", "--pid", str(pid))
    text = out.stdout.decode("utf-8", "replace")
    check("17592186044" not in text, "no underflowed size in --explain: %s" % text)
    check("no process %d" % pid in text, "the inconsistent entry is not explained: %s" % text)
    out = smi("--json")
    doc = json.loads(out.stdout.decode("utf-8"))
    check(pid not in {q["pid"] for q in doc["processes"]} and
          "failed validation" in doc["warnings"], "inconsistent entry reported: %r" % doc)
    m.close()
    f.close()
finally:
    if p and p.poll() is None:
        p.stdin.close()
        p.wait(timeout=30)
    try:
        os.unlink("/dev/shm/%s-v%d" % (REG, VERSION))
    except OSError:
        pass

sys.exit(summary())
