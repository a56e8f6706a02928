#!/bin/sh
# report.html of the known workload, opened in headless Chromium: checks what the page
# renders (lanes per engine and stream, the memory curve, the op table, the verdict)
# and that it loads nothing from outside the file.
# usage: run_report.sh HWRT_PROF PROF_WORKLOAD OUTDIR SRCDIR
set -eu
TOOL=$1 APP=$2 OUT=$3 SRC=$4
rm -rf "$OUT"
"$TOOL" --application="$APP" --output="$OUT" > /dev/null
"$TOOL" --export=on --output="$OUT" > /dev/null
BROWSER=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$BROWSER" ]; then
    echo "FAIL: no chromium found (scripts/deps.sh installs the Debian package chromium)"
    exit 1
fi
# Chromium wants a writable home and runtime dir; keep them inside OUT.
export HOME="$OUT/home" XDG_RUNTIME_DIR="$OUT/home"
mkdir -p "$HOME"
FLAGS="--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run"
timeout 120 "$BROWSER" $FLAGS --dump-dom "file://$OUT/report.html" > "$OUT/dom.html" 2> "$OUT/chromium.log" || true
timeout 120 "$BROWSER" $FLAGS --window-size=1280,1200 --screenshot="$OUT/report.png" \
    "file://$OUT/report.html" >> "$OUT/chromium.log" 2>&1 || true
# a zoomed view: the middle fifth of the trace, through the URL's #t=US0,US1
win=$(/usr/bin/python3 -c "
import json, re, sys
d = json.loads(re.search(r'const DATA = (\{.*?\});\n', open(sys.argv[1]).read(), re.S).group(1))
t = [s[0] for L in d['lanes'] for s in L['spans']] + [s[0] + s[1] for L in d['lanes'] for s in L['spans']]
a, b = min(t), max(t)
print('%.3f %.3f' % (a + (b - a) * 0.4, a + (b - a) * 0.6))" "$OUT/report.html")
set -- $win
timeout 120 "$BROWSER" $FLAGS --dump-dom "file://$OUT/report.html#t=$1,$2" > "$OUT/zoom.html" \
    2>> "$OUT/chromium.log" || true
/usr/bin/python3 "$SRC/check_report.py" "$OUT/report.html" "$OUT/dom.html" "$OUT/memory_record.csv" \
    "$OUT/report.png" "$OUT/zoom.html" "$1" "$2"
