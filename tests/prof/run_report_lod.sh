#!/bin/sh
# report.html of 12000 launches (24000+ spans) in headless Chromium: every op is its own
# span in the data; the whole view is drawn with level of detail (fewer rects than spans,
# merged blocks marked); a zoomed view of under 20000 spans draws each one.
# usage: run_report_lod.sh HWRT_PROF MANY_OPS OUTDIR
set -eu
TOOL=$1 APP=$2 OUT=$3
rm -rf "$OUT"
"$TOOL" --application="$APP" --output="$OUT" > /dev/null
"$TOOL" --export=on --output="$OUT" > /dev/null
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$BROWSER" ] || { echo "FAIL: no chromium found"; exit 1; }
export HOME="$OUT/home" XDG_RUNTIME_DIR="$OUT/home"
mkdir -p "$HOME"
FLAGS="--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
timeout 180 "$BROWSER" $FLAGS --dump-dom "file://$OUT/report.html" > "$OUT/full.html" 2> "$OUT/chromium.log" || true
win=$(/usr/bin/python3 -c "
import json, re, sys
d = json.loads(re.search(r'const DATA = (\{.*?\});\n', open(sys.argv[1]).read(), re.S).group(1))
t = sorted(s[0] for L in d['lanes'] for s in L['spans'])
print('%.3f %.3f' % (t[len(t) // 2], t[len(t) // 2 + len(t) // 8]))" "$OUT/report.html")
set -- $win
timeout 180 "$BROWSER" $FLAGS --dump-dom "file://$OUT/report.html#t=$1,$2" > "$OUT/zoom.html" 2>> "$OUT/chromium.log" || true
/usr/bin/python3 - "$OUT/report.html" "$OUT/full.html" "$OUT/zoom.html" "$1" "$2" <<'PY'
import json, re, sys
src = open(sys.argv[1]).read()
d = json.loads(re.search(r"const DATA = (\{.*?\});\n", src, re.S).group(1))
dev = [L for L in d["lanes"] if L["kind"] == "device"]
total = sum(len(L["spans"]) for L in d["lanes"])
fills = sum(1 for L in dev for s in L["spans"] if d["names"][s[2]] == "Fill")
def stats(path):
    m = re.search(r'<div id="render-stats"([^>]*)>', open(path).read())
    return dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1))) if m else {}
full, zoom = stats(sys.argv[2]), stats(sys.argv[3])
a, b = float(sys.argv[4]), float(sys.argv[5])
inwin = sum(1 for L in d["lanes"] for s in L["spans"] if not (s[0] + s[1] < a or s[0] > b))
print("spans %d (fills %d); full view %r; zoom %g..%g (%d in window) %r" % (total, fills, full, a, b, inwin, zoom))
ok = fills == 12000                                           # every op its own span
ok &= full.get("spans") == str(total) and int(full.get("visible", 0)) == total
ok &= 0 < int(full.get("drawn", 0)) < total and int(full.get("lod", 0)) > 0   # level of detail
ok &= 1000 < inwin < 20000 and zoom.get("visible") == str(inwin) and zoom.get("drawn") == str(inwin) \
      and zoom.get("lod") == "0"                              # zoomed in: each span drawn
sys.exit(0 if ok else 1)
PY
echo "report level of detail: ok"
