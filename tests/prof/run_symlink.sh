#!/bin/sh
# hwrt-prof's exports must not write through symlinks planted where they go (nor at
# the old NAME.tmp): each file is replaced, the link's target stays as it was.
# usage: run_symlink.sh HWRT_PROF PROF_WORKLOAD OUTDIR
set -eu
TOOL=$1 APP=$2 OUT=$3
rm -rf "$OUT"
mkdir -p "$OUT"
"$APP" "$OUT/api" > /dev/null
echo precious > "$OUT/victim"
files="trace.json op_summary.csv op_statistic.csv memcpy_summary.csv memory_record.csv report.html verdict.txt"
for f in $files; do
    ln -s "$OUT/victim" "$OUT/api/$f"
    ln -s "$OUT/victim" "$OUT/api/$f.tmp"
done
"$TOOL" --export=on --output="$OUT/api" > /dev/null
fail=0
[ "$(cat "$OUT/victim")" = precious ] || { echo "FAIL: the symlinks' target was overwritten"; fail=1; }
for f in $files; do
    if [ -L "$OUT/api/$f" ] || [ ! -s "$OUT/api/$f" ]; then echo "FAIL: $f is not a new file"; fail=1; fi
done
[ $fail = 0 ] && echo "exports replaced the planted symlinks; their target is intact"
exit $fail
