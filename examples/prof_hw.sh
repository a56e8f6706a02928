#!/bin/sh
# prof_hw.sh — the seed's msprof script (section 3), with hwrt-prof on the simulated NPU:
# collect a profile of the hardware-op demo, export it, and filter the Memcpy ops.
#   sh examples/prof_hw.sh            (from the repository root, after `make build`)
# BUILD (default: build) names the build directory, OUT (default: ./prof_ms_hw) the output.
set -eu
BUILD=${BUILD:-build}
OUT=${OUT:-./prof_ms_hw}
PROF=$BUILD/bin/hwrt-prof
[ -x "$PROF" ] || PROF=$(command -v hwrt-prof || true)
if [ -z "$PROF" ] || [ ! -x "$BUILD/examples/hardware_op_demo" ]; then
    echo "prof_hw.sh: build first (make build), or set BUILD to the build directory" >&2
    exit 1
fi

# collect hardware-op performance data (msprof --application=... --output=...)
"$PROF" --application="$BUILD/examples/hardware_op_demo" --output="$OUT"

# export the reports: trace.json, op_summary.csv, op_statistic.csv, memcpy_summary.csv,
# memory_record.csv, report.html (msprof --export=on)
"$PROF" --export=on --output="$OUT"

# filter the memory-copy ops (msprof --analyze=op ... | grep)
"$PROF" --analyze=op --output="$OUT" | grep -E "op_name|duration|Memcpy"

# the Insight view: the timeline of copies and op execution
echo "timeline: open $OUT/report.html in a browser, or load $OUT/trace.json in Perfetto (ui.perfetto.dev)"
