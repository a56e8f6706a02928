#!/bin/sh
# hwrt_empty_cache's release is in the memory record: after it, reserved is 0, and the
# report's memory curve holds that point.
# usage: run_empty_cache.sh HWRT_PROF EMPTY_CACHE OUTDIR
set -eu
TOOL=$1 APP=$2 OUT=$3
rm -rf "$OUT"
"$TOOL" --application="$APP" --output="$OUT" > /dev/null
"$TOOL" --export=on --output="$OUT" > /dev/null
cat "$OUT/memory_record.csv"
/usr/bin/python3 - "$OUT/memory_record.csv" "$OUT/report.html" <<'PY'
import csv, json, re, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = list(rows[0].keys())
res = [k for k in keys if "eserved" in k][0]
kind = [k for k in keys if k.lower().startswith("type") or k.lower() in ("event", "kind", "action")]
last = rows[-1]
ok = float(last[res]) == 0 and any(float(r[res]) >= 64 for r in rows)
print("reserved column %r, last row %r" % (res, last))
html = open(sys.argv[2]).read()
pts = json.loads(re.search(r'"mem":(\[.*?\]\}\])', html, re.S).group(1))[0]["pts"]
ok = ok and pts[-1][2] == 0 and max(p[2] for p in pts) >= 64
print("report memory points", pts)
sys.exit(0 if ok else 1)
PY
echo "empty_cache release: ok"
