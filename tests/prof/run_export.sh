#!/bin/sh
# Collect the known workload both ways (HWRT_PROFILE through hwrt-prof --application,
# and hwrt_profiler_start/stop in the program), export, and check the files; then the
# seed's grep on the op table.
# usage: run_export.sh HWRT_PROF PROF_WORKLOAD OUTDIR SRCDIR
set -eu
TOOL=$1 APP=$2 OUT=$3 SRC=$4
rm -rf "$OUT"
"$TOOL" --application="$APP" --output="$OUT/env"
"$TOOL" --export=on --output="$OUT/env" > "$OUT/env/export.txt"
python3 "$SRC/check_export.py" "$OUT/env"

"$APP" "$OUT/api" > /dev/null
"$TOOL" --export=on --output="$OUT/api" > /dev/null
python3 "$SRC/check_export.py" "$OUT/api"

"$TOOL" --analyze=op --output="$OUT/env" > "$OUT/env/analyze.txt"
grep -E "op_name|duration|Memcpy" "$OUT/env/analyze.txt" > "$OUT/env/grep.txt"
fail=0
head -n 1 "$OUT/env/grep.txt" | grep -q "op_name" || { echo "FAIL: no op_name header"; fail=1; }
head -n 1 "$OUT/env/grep.txt" | grep -q "duration" || { echo "FAIL: no duration header"; fail=1; }
for op in MemcpyHtoD MemcpyDtoH MemcpyDtoD; do
    n=$(grep -c " $op\$" "$OUT/env/grep.txt" || true)
    [ "$n" = 1 ] || { echo "FAIL: $op rows in the grep: $n"; fail=1; }
done
# the HtoD row: 5 launches
grep -E "^[0-9.]+ +[0-9.]+ +5 .* MemcpyHtoD$" "$OUT/env/grep.txt" > /dev/null ||
    { echo "FAIL: MemcpyHtoD count is not 5"; cat "$OUT/env/grep.txt"; fail=1; }
grep -q "Memcpy share of device time" "$OUT/env/grep.txt" || { echo "FAIL: no Memcpy share"; fail=1; }
[ $fail = 0 ] && echo "op table grep: ok"
exit $fail
