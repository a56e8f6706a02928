#!/bin/sh
# The min-capacity table of docs/memory.md: generates the traces (three generators at
# several settings) into a scratch directory and runs hwrt-bench-pool --min-capacity on
# each, with a baseline build of the tool in the same run when one is given.
#
#   scripts/min_capacity_table.sh BENCH [BASELINE_BENCH] [-- --conf key:value,...]
#
# BENCH: build/tools/hwrt-bench-pool/hwrt-bench-pool. Prints a markdown table: peak
# requested, and min device / peak requested per mode (plain, expandable).
set -eu
NEW=$1; shift
BASE=""
if [ $# -gt 0 ] && [ "$1" != "--" ]; then BASE=$1; shift; fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
PY=/usr/bin/python3
S=$(cd "$(dirname "$0")" && pwd)
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
gen() { name=$1; script=$2; shift 2; "$PY" "$S/$script" "$@" > "$D/$name.csv" 2>/dev/null; echo "$name|$script $*" >> "$D/list"; }
gen s_default        gen_trace_llm_serving.py
gen s_b8             gen_trace_llm_serving.py --max-batch 8 --requests 64
gen s_uniform_b48    gen_trace_llm_serving.py --prompts uniform --max-batch 48 --requests 150
gen s_lognorm_big    gen_trace_llm_serving.py --prompts lognormal --layers 32 --hidden 5120 --max-batch 16
gen s_chunk512_logn  gen_trace_llm_serving.py --kv-chunk 512 --prompts lognormal --seed 9
gen s_l32_b32_unif   gen_trace_llm_serving.py --layers 32 --hidden 4096 --max-batch 32 --prompts uniform --requests 120
gen s_chunk64_b8     gen_trace_llm_serving.py --kv-chunk 64 --max-batch 8 --layers 24 --hidden 2048
gen t_default        gen_trace_transformer.py
gen t_b8_s1024_m4    gen_trace_transformer.py --batch 8 --seq 1024 --micro 4
gen t_big_s4096      gen_trace_transformer.py --layers 24 --hidden 3072 --heads 24 --batch 2 --seq 4096
gen t_small_b16      gen_trace_transformer.py --layers 6 --hidden 1024 --batch 16 --seq 512 --micro 8 --steps 4
gen t_b1_s8192       gen_trace_transformer.py --batch 1 --seq 8192 --micro 1 --steps 3
gen v_default        gen_trace_varlen_serving.py
gen v_s6_b64         gen_trace_varlen_serving.py --streams 6 --max-batch 64 --requests 200 --prompt-sigma 1.4 --seed 5
gen v_s1_g105        gen_trace_varlen_serving.py --streams 1 --chunk 512 --kv-growth 1.05 --seed 3
# settings added after the pool's policy was tuned (issue 19's second round), one per generator
gen s_c128_l20_unif  gen_trace_llm_serving.py --kv-chunk 128 --max-batch 12 --layers 20 --hidden 2560 --prompts uniform --requests 80 --seed 21
gen t_l8_b6_s1536    gen_trace_transformer.py --layers 8 --hidden 1536 --heads 12 --batch 6 --seq 1536 --micro 3 --steps 3 --seed 4
gen v_l16_s4_g15     gen_trace_varlen_serving.py --layers 16 --hidden 2048 --kv-dim 512 --streams 4 --max-batch 24 --prompt-median 400 --kv-growth 1.5 --requests 100 --seed 17
ratios() {   # bench trace [args]: "peak_MiB plain expandable"
  b=$1; f=$2; shift 2
  "$b" --min-capacity "$f" --json --devices 1GiB "$@" | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
r = ["%.4f" % x["over_peak_requested"] if x["fits"] else "-" for x in d["results"]]
print("%.0f" % (d["peak_requested"] / 2**20), *r)'
}
if [ -n "$BASE" ]; then
  echo "| trace | generator settings | peak requested MiB | before: plain | expandable | after: plain | expandable |"
  echo "|---|---|---|---|---|---|---|"
else
  echo "| trace | generator settings | peak requested MiB | plain | expandable |"
  echo "|---|---|---|---|---|"
fi
while IFS='|' read -r name what; do
  n=$(ratios "$NEW" "$D/$name.csv" "$@")
  if [ -n "$BASE" ]; then
    b=$(ratios "$BASE" "$D/$name.csv" "$@")
    echo "$name|$what|$b|$n" | awk -F'|' '{split($3,b," "); split($4,n," "); printf "| %s | `%s` | %s | %s | %s | %s | %s |\n", $1, $2, n[1], b[2], b[3], n[2], n[3]}'
  else
    echo "$name|$what|$n" | awk -F'|' '{split($3,n," "); printf "| %s | `%s` | %s | %s | %s |\n", $1, $2, n[1], n[2], n[3]}'
  fi
done < "$D/list"
